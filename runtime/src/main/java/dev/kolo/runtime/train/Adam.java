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
public final class Adam extends AdamFamily {
    /**
     * Adam with beta1 0.9, beta2 0.999 and epsilon 1e-8.
     *
     * @param weightDecay L2 penalty added to the gradient, 0 for none
     */
    public Adam(double weightDecay) {
        super("Adam", weightDecay);
    }

    /**
     * @param beta1       decay of the first moment (mean of the gradient), in [0, 1), typically 0.9
     * @param beta2       decay of the second moment (mean of its square), in [0, 1), typically 0.999
     * @param epsilon     added to the root of the second moment so no step divides by zero, &gt; 0, typically 1e-8
     * @param weightDecay L2 penalty added to the gradient, &gt;= 0 (0 for none)
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    public Adam(double beta1, double beta2, double epsilon, double weightDecay) {
        super("Adam", beta1, beta2, epsilon, weightDecay);
    }

    /** The L2 term: {@code weightDecay * w} added to the gradient, so it passes through the moments. */
    @Override
    float gradientL2() {
        return (float) weightDecay;
    }

    @Override
    void update(AdamMoments.Moments s, float[] w, double learningRate) {
        float lr = (float) learningRate;
        for (int i = 0; i < w.length; i++) {
            w[i] -= lr * s.direction(i);
        }
    }
}
