package dev.kolo.runtime.train;

/**
 * LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning"): Adam's bias-corrected moments give each
 * parameter a direction {@code r = mhat / (sqrt(vhat) + eps) + weightDecay * w}, and the whole parameter (a
 * layer's weights) moves by {@code w -= lr * trust * r} with the trust ratio {@code trust = ||w|| / ||r||}
 * (1 when either norm is 0, so zero-initialised parameters still learn). The step of every layer is thus
 * proportional to its weights' norm, which keeps training stable at the very large batches of many workers.
 * Norms are accumulated in double. Keeps {@code <name>.m}, {@code <name>.v} and {@code <name>.step} per
 * parameter name, created on first use (see {@link #state}). Not thread-safe (one training thread).
 */
public final class Lamb extends AdamFamily {
    /**
     * LAMB with beta1 0.9, beta2 0.999 and epsilon 1e-8.
     *
     * @param weightDecay weight added to the direction, 0 for none (the paper trains BERT with 0.01)
     */
    public Lamb(double weightDecay) {
        super("Lamb", weightDecay);
    }

    /**
     * @param beta1       decay of the first moment, in [0, 1), typically 0.9
     * @param beta2       decay of the second moment, in [0, 1), typically 0.999
     * @param epsilon     added to the root of the second moment, &gt; 0, typically 1e-8
     * @param weightDecay weight added to the direction, &gt;= 0 (0 for none)
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    public Lamb(double beta1, double beta2, double epsilon, double weightDecay) {
        super("Lamb", beta1, beta2, epsilon, weightDecay);
    }

    @Override
    void update(AdamMoments.Moments s, float[] w, double learningRate) {
        float decay = (float) weightDecay;
        double weightNorm2 = 0;
        double directionNorm2 = 0;
        for (int i = 0; i < w.length; i++) {
            float r = direction(s, w, i, decay);
            weightNorm2 += (double) w[i] * w[i];
            directionNorm2 += (double) r * r;
        }
        double trust = weightNorm2 > 0 && directionNorm2 > 0
                ? Math.sqrt(weightNorm2) / Math.sqrt(directionNorm2) : 1;
        float step = (float) (learningRate * trust);
        // r is computed again rather than kept: the same float arithmetic gives the same value, and a step
        // then needs no parameter-sized scratch array.
        for (int i = 0; i < w.length; i++) {
            w[i] -= step * direction(s, w, i, decay);
        }
    }

    private static float direction(AdamMoments.Moments s, float[] w, int i, float weightDecay) {
        return s.direction(i) + weightDecay * w[i];
    }
}
