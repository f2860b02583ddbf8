package dev.kolo.runtime.train;

/**
 * Adam with decoupled weight decay (Loshchilov &amp; Hutter 2019), as PyTorch's {@code AdamW}: each step first
 * shrinks the weights, {@code w *= 1 - lr * weightDecay}, then takes the {@link Adam} step of the plain gradient.
 * Unlike Adam's L2 term the decay never enters the moments, so every weight decays at the same rate whatever its
 * gradient's scale. Keeps {@code <name>.m}, {@code <name>.v} and {@code <name>.step} per parameter name, created
 * on first use (see {@link #state}). Not thread-safe (one training thread).
 */
public final class AdamW extends AdamFamily {
    /**
     * AdamW with beta1 0.9, beta2 0.999 and epsilon 1e-8.
     *
     * @param weightDecay fraction of the weights removed per unit of learning rate, typically 0.01
     */
    public AdamW(double weightDecay) {
        super("AdamW", weightDecay);
    }

    /**
     * @param beta1       decay of the first moment, in [0, 1), typically 0.9
     * @param beta2       decay of the second moment, in [0, 1), typically 0.999
     * @param epsilon     added to the root of the second moment, &gt; 0, typically 1e-8
     * @param weightDecay fraction of the weights removed per unit of learning rate, &gt;= 0, typically 0.01
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    public AdamW(double beta1, double beta2, double epsilon, double weightDecay) {
        super("AdamW", beta1, beta2, epsilon, weightDecay);
    }

    @Override
    void update(AdamMoments.Moments s, float[] w, double learningRate) {
        float lr = (float) learningRate;
        float keep = (float) (1 - learningRate * weightDecay);
        for (int i = 0; i < w.length; i++) {
            w[i] = w[i] * keep - lr * s.direction(i);
        }
    }
}
