package dev.kolo.runtime.train;

/**
 * Adam with decoupled weight decay (Loshchilov &amp; Hutter 2019), as PyTorch's {@code AdamW}: each step first
 * shrinks the weights, {@code w *= 1 - lr * weightDecay}, then takes the {@link Adam} step of the plain gradient.
 * Unlike Adam's L2 term the decay never enters the moments, so every weight decays at the same rate whatever its
 * gradient's scale. Keeps {@code <name>.m}, {@code <name>.v} and {@code <name>.step} per parameter name, created
 * on first use (see {@link #state}). Not thread-safe (one training thread).
 */
public final class AdamW implements UpdateRule {
    private final AdamMoments moments;
    private final double weightDecay;

    /**
     * AdamW with beta1 0.9, beta2 0.999 and epsilon 1e-8.
     *
     * @param weightDecay fraction of the weights removed per unit of learning rate, typically 0.01
     */
    public AdamW(double weightDecay) {
        this(AdamMoments.DEFAULT_BETA1, AdamMoments.DEFAULT_BETA2, AdamMoments.DEFAULT_EPSILON, weightDecay);
    }

    /**
     * @param beta1       decay of the first moment, in [0, 1), typically 0.9
     * @param beta2       decay of the second moment, in [0, 1), typically 0.999
     * @param epsilon     added to the root of the second moment, &gt; 0, typically 1e-8
     * @param weightDecay fraction of the weights removed per unit of learning rate, &gt;= 0, typically 0.01
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    public AdamW(double beta1, double beta2, double epsilon, double weightDecay) {
        this.moments = new AdamMoments("AdamW", beta1, beta2, epsilon);
        this.weightDecay = AdamMoments.checkWeightDecay("AdamW", weightDecay);
    }

    @Override
    public void apply(Parameter p, double learningRate) {
        AdamMoments.Moments s = moments.advance(p, 0f);
        float[] w = p.values();
        float lr = (float) learningRate;
        float keep = (float) (1 - learningRate * weightDecay);
        for (int i = 0; i < w.length; i++) {
            w[i] = w[i] * keep - lr * s.direction(i);
        }
    }

    /**
     * Hands over {@code p.name() + ".m"} and {@code ".v"} (the parameter's shape) and {@code ".step"} (a
     * {@code long[1]}).
     */
    @Override
    public void state(Parameter p, StateSink sink) {
        moments.state(p, sink);
    }
}
