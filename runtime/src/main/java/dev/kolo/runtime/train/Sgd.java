package dev.kolo.runtime.train;

import java.util.HashMap;
import java.util.Map;

/**
 * Stochastic gradient descent with momentum and L2 weight decay:
 * {@code v = momentum * v + (g + weightDecay * w); w -= lr * v}. Keeps one velocity array per parameter
 * name, created on first use, whose {@link #state state} is {@code <name>.velocity}. Not thread-safe (one
 * training thread).
 */
public final class Sgd implements UpdateRule {
    private final float momentum;
    private final float weightDecay;
    private final Map<String, float[]> velocity = new HashMap<>();

    /**
     * @param momentum    0 for plain SGD, typically 0.9
     * @param weightDecay L2 penalty added to the gradient, 0 for none
     */
    public Sgd(double momentum, double weightDecay) {
        if (!(momentum >= 0 && momentum < 1) || !(weightDecay >= 0)) {
            throw new IllegalArgumentException("need 0 <= momentum < 1 and weightDecay >= 0 (got " + momentum
                    + ", " + weightDecay + ")");
        }
        this.momentum = (float) momentum;
        this.weightDecay = (float) weightDecay;
    }

    @Override
    public void apply(Parameter p, double learningRate) {
        float[] w = p.values();
        float[] g = p.gradient();
        float lr = (float) learningRate;
        if (momentum == 0) {
            for (int i = 0; i < w.length; i++) {
                w[i] -= lr * (g[i] + weightDecay * w[i]);
            }
            return;
        }
        float[] v = velocity(p);
        for (int i = 0; i < w.length; i++) {
            float vi = momentum * v[i] + g[i] + weightDecay * w[i];
            v[i] = vi;
            w[i] -= lr * vi;
        }
    }

    /** With momentum, hands over {@code p.name() + ".velocity"}; plain SGD keeps no state. */
    @Override
    public void state(Parameter p, StateSink sink) {
        if (momentum > 0) {
            sink.floats(p.name() + ".velocity", velocity(p), p.shape());
        }
    }

    /** @return the live momentum buffer of {@code p} (zeros until its first step), e.g. to checkpoint it */
    public float[] velocity(Parameter p) {
        return velocity.computeIfAbsent(p.name(), n -> new float[p.size()]);
    }
}
