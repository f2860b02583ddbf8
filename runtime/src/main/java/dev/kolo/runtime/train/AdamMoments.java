package dev.kolo.runtime.train;

import java.util.HashMap;
import java.util.Map;

/**
 * The moment estimates that {@link Adam}, {@link AdamW} and {@link Lamb} share (Kingma &amp; Ba 2015): per
 * parameter name a first moment {@code m}, a second moment {@code v} and the number of steps taken, created on
 * first use. Each parameter counts its own steps, so one that missed steps (frozen for a while, say) is
 * bias-corrected by the steps it took, not by the optimizer's.
 */
final class AdamMoments {
    static final double DEFAULT_BETA1 = 0.9;
    static final double DEFAULT_BETA2 = 0.999;
    static final double DEFAULT_EPSILON = 1e-8;

    private final String rule;
    // Kept in double for the bias corrections (beta^t), and as floats for the per-element arithmetic. 1 - beta
    // is rounded from the double so that m's scale matches 1 - beta^t's (0.1f is closer to 0.1 than 1 - 0.9f).
    private final double beta1;
    private final double beta2;
    private final float beta1f;
    private final float beta2f;
    private final float oneMinusBeta1;
    private final float oneMinusBeta2;
    private final float epsilon;
    private final Map<String, Moments> byName = new HashMap<>();

    /**
     * @param rule the rule's name, for messages
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    AdamMoments(String rule, double beta1, double beta2, double epsilon) {
        this.rule = rule;
        checkBeta("beta1", beta1);
        checkBeta("beta2", beta2);
        if (!(epsilon > 0) || Double.isInfinite(epsilon)) {
            throw new IllegalArgumentException(rule + ": epsilon must be a finite number > 0, typically 1e-8 (got "
                    + epsilon + ")");
        }
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.beta1f = (float) beta1;
        this.beta2f = (float) beta2;
        this.oneMinusBeta1 = (float) (1 - beta1);
        this.oneMinusBeta2 = (float) (1 - beta2);
        this.epsilon = (float) epsilon;
    }

    /** Checks that {@code weightDecay} is finite and not negative. */
    static void checkWeightDecay(String rule, double weightDecay) {
        if (!(weightDecay >= 0) || Double.isInfinite(weightDecay)) {
            throw new IllegalArgumentException(rule + ": weightDecay must be a finite number >= 0, 0 for none (got "
                    + weightDecay + ")");
        }
    }

    private void checkBeta(String name, double beta) {
        if (!(beta >= 0 && beta < 1)) {
            throw new IllegalArgumentException(rule + ": " + name + " must be in [0, 1) (got " + beta + ")");
        }
    }

    /**
     * Takes one step of {@code p}'s moments with the gradient {@code g + l2 * w}:
     * {@code m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2}, and counts the step.
     *
     * @return the moments, with this step's bias corrections for {@link Moments#direction}
     */
    Moments advance(Parameter p, float l2) {
        Moments s = of(p);
        float[] w = p.values();
        float[] g = p.gradient();
        float[] m = s.m;
        float[] v = s.v;
        for (int i = 0; i < m.length; i++) {
            float gi = g[i] + l2 * w[i];
            m[i] = beta1f * m[i] + oneMinusBeta1 * gi;
            v[i] = beta2f * v[i] + oneMinusBeta2 * gi * gi;
        }
        long t = ++s.step[0];
        // m and v start at zero, so after t steps they are biased towards it by a factor 1 - beta^t.
        s.correction1 = (float) (1 / (1 - Math.pow(beta1, t)));
        s.correction2 = (float) (1 / (1 - Math.pow(beta2, t)));
        return s;
    }

    /** Hands {@code <name>.m}, {@code <name>.v} (the parameter's shape), {@code <name>.step} ([1]) to the sink. */
    void state(Parameter p, UpdateRule.StateSink sink) {
        Moments s = of(p);
        long[] shape = p.shape();
        sink.floats(p.name() + ".m", s.m, shape);
        sink.floats(p.name() + ".v", s.v, shape);
        sink.longs(p.name() + ".step", s.step, new long[] {1});
    }

    private Moments of(Parameter p) {
        Moments s = byName.computeIfAbsent(p.name(), n -> new Moments(p.size(), epsilon));
        if (s.m.length != p.size()) {
            throw new IllegalArgumentException(rule + ": " + p + " has " + p.size() + " elements but the state kept "
                    + "under its name has " + s.m.length + "; give every parameter its own name");
        }
        return s;
    }

    /** One parameter's moments and step count (live arrays, registered as its state). */
    static final class Moments {
        final float[] m;
        final float[] v;
        final long[] step = new long[1];
        private final float epsilon;
        private float correction1;
        private float correction2;

        private Moments(int size, float epsilon) {
            this.m = new float[size];
            this.v = new float[size];
            this.epsilon = epsilon;
        }

        /** @return Adam's direction for element {@code i}, {@code mhat / (sqrt(vhat) + eps)}, after {@code advance} */
        float direction(int i) {
            float mHat = m[i] * correction1;
            float vHat = v[i] * correction2;
            return mHat / ((float) Math.sqrt(vHat) + epsilon);
        }
    }
}
