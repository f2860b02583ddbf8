package dev.kolo.runtime.train;

/**
 * Adam (Kingma &amp; Ba 2015) with bias correction and optional L2 weight decay added to the gradient, as DJL's
 * and PyTorch's {@code Adam} do: with {@code g = gradient + weightDecay * w},
 * {@code m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
 * w -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)}, {@code t} counting this parameter's steps.
 * The decay then passes through the moments, so it is scaled per element like the gradient; {@link AdamW}
 * decouples it. Keeps {@code <name>.m}, {@code <name>.v} and {@code <name>.step} per parameter name, created
 * on first use (see {@link #state}). Not thread-safe (one training thread).
 */
public final class Adam implements UpdateRule {
    private final AdamMoments moments;
    private final float weightDecay;

    /**
     * Adam with beta1 0.9, beta2 0.999 and epsilon 1e-8.
     *
     * @param weightDecay L2 penalty added to the gradient, 0 for none
     */
    public Adam(double weightDecay) {
        this(AdamMoments.DEFAULT_BETA1, AdamMoments.DEFAULT_BETA2, AdamMoments.DEFAULT_EPSILON, weightDecay);
    }

    /**
     * @param beta1       decay of the first moment (mean of the gradient), in [0, 1), typically 0.9
     * @param beta2       decay of the second moment (mean of its square), in [0, 1), typically 0.999
     * @param epsilon     added to the root of the second moment so no step divides by zero, &gt; 0, typically 1e-8
     * @param weightDecay L2 penalty added to the gradient, &gt;= 0 (0 for none)
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    public Adam(double beta1, double beta2, double epsilon, double weightDecay) {
        this.moments = new AdamMoments("Adam", beta1, beta2, epsilon);
        this.weightDecay = AdamMoments.checkWeightDecay("Adam", weightDecay);
    }

    @Override
    public void apply(Parameter p, double learningRate) {
        AdamMoments.Moments s = moments.advance(p, weightDecay);
        float[] w = p.values();
        float lr = (float) learningRate;
        for (int i = 0; i < w.length; i++) {
            w[i] -= lr * s.direction(i);
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
