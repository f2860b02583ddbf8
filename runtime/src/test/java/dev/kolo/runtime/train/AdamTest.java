package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.testing.DoubleAdam;
import org.junit.jupiter.api.Test;

/** Adam: the L2 weight decay goes through the moments (the reference's weight decays check it). */
class AdamTest extends AdamFamilyContract {
    AdamTest() {
        super("Adam", DoubleAdam.Kind.ADAM, Adam::new, Adam::new);
    }

    /**
     * Bias correction undoes the zero start of the moments: with a constant gradient, mhat = g and vhat = g^2 at
     * every step, so each step moves each weight by lr * g / (|g| + eps), about lr * sign(g), from the first on
     * (without correction the first step would be sqrt(0.001) / 0.1, about a third of that).
     */
    @Test
    void biasCorrectionMakesEveryStepAboutTheLearningRate() {
        float[] g = {3f, -0.02f, 1e-3f, -7f};
        Parameter p = Parameter.of("w", new float[4], g.clone());
        Adam adam = new Adam(0);
        float[] before = new float[4];
        for (int step = 1; step <= 3; step++) {
            System.arraycopy(p.values(), 0, before, 0, 4);
            adam.apply(p, 0.1);
            for (int i = 0; i < 4; i++) {
                double expected = -0.1 * g[i] / (Math.abs(g[i]) + 1e-8);
                assertEquals(expected, p.values()[i] - before[i], 1e-6 * 0.1 * step, "step " + step + ", w[" + i + "]");
            }
        }
    }
}
