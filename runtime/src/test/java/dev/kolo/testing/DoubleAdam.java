package dev.kolo.testing;

/**
 * Adam, AdamW and LAMB for one parameter in double precision, written straight from the papers' formulas
 * (moments, bias correction, then the rule's own update), to check the float implementations against (the runtime's rules and the DJL integration's optimizers).
 */
public final class DoubleAdam {
    /** Which rule. */
    public enum Kind { ADAM, ADAMW, LAMB }

    public final Kind kind;
    public final double beta1;
    public final double beta2;
    public final double epsilon;
    public final double weightDecay;
    public final double[] w;
    public final double[] m;
    public final double[] v;
    public long t;

    public DoubleAdam(Kind kind, double beta1, double beta2, double epsilon, double weightDecay, float[] initial) {
        this.kind = kind;
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.epsilon = epsilon;
        this.weightDecay = weightDecay;
        this.w = new double[initial.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = initial[i];
        }
        this.m = new double[w.length];
        this.v = new double[w.length];
    }

    /** One step of the rule with this gradient and learning rate. */
    public void step(float[] gradient, double lr) {
        t++;
        double[] u = new double[w.length];
        for (int i = 0; i < w.length; i++) {
            double g = gradient[i] + (kind == Kind.ADAM ? weightDecay * w[i] : 0); // L2 only in plain Adam
            m[i] = beta1 * m[i] + (1 - beta1) * g;
            v[i] = beta2 * v[i] + (1 - beta2) * g * g;
            double mHat = m[i] / (1 - Math.pow(beta1, t));
            double vHat = v[i] / (1 - Math.pow(beta2, t));
            u[i] = mHat / (Math.sqrt(vHat) + epsilon);
        }
        switch (kind) {
            case ADAM:
                for (int i = 0; i < w.length; i++) {
                    w[i] -= lr * u[i];
                }
                break;
            case ADAMW:
                for (int i = 0; i < w.length; i++) {
                    w[i] = w[i] - lr * weightDecay * w[i] - lr * u[i];
                }
                break;
            case LAMB:
                double wNorm = 0;
                double rNorm = 0;
                for (int i = 0; i < w.length; i++) {
                    u[i] += weightDecay * w[i];
                    wNorm += w[i] * w[i];
                    rNorm += u[i] * u[i];
                }
                wNorm = Math.sqrt(wNorm);
                rNorm = Math.sqrt(rNorm);
                double trust = wNorm > 0 && rNorm > 0 ? wNorm / rNorm : 1;
                for (int i = 0; i < w.length; i++) {
                    w[i] -= lr * trust * u[i];
                }
                break;
            default:
                throw new AssertionError(kind);
        }
    }
}
