package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.testing.DoubleAdam;
import org.junit.jupiter.api.Test;

class LambTest extends AdamFamilyContract {
    LambTest() {
        super("Lamb", DoubleAdam.Kind.LAMB, Lamb::new, Lamb::new);
    }

    /** The trust ratio scales each parameter's step to lr times its weights' norm, whatever the gradient's scale. */
    @Test
    void aStepIsTheLearningRateTimesTheWeightNorm() {
        for (float scale : new float[] {1e-3f, 1f, 1e3f}) {
            Parameter p = Parameter.of("w", new float[] {3f, -4f, 0.5f, 1f}, new float[] {scale, 2 * scale, -scale, 0});
            float[] before = p.values().clone();
            new Lamb(0.01).apply(p, 0.1);
            assertEquals(0.1 * norm(before), norm(difference(p.values(), before)), 1e-5, "gradient scale " + scale);
        }
    }

    /**
     * A zero-initialised parameter has ||w|| = 0, which would make the trust ratio 0 and the parameter never
     * learn: the ratio is then 1, so the first step is Adam's, lr * g / (|g| + eps).
     */
    @Test
    void aZeroWeightTakesAnAdamStep() {
        float[] g = {0.5f, -2f, 1e-3f};
        Parameter p = Parameter.of("bias", new float[3], g.clone());
        new Lamb(0.01).apply(p, 0.1);
        for (int i = 0; i < 3; i++) {
            assertEquals(-0.1 * g[i] / (Math.abs(g[i]) + 1e-8), p.values()[i], 1e-7, "w[" + i + "]");
        }
    }

    /** No gradient and no decay: ||r|| = 0, the ratio is 1 and nothing moves (no 0/0). */
    @Test
    void aZeroDirectionMovesNothing() {
        Parameter p = Parameter.of("w", new float[] {1f, -2f}, new float[2]);
        new Lamb(0).apply(p, 0.1);
        assertArrayEquals(new float[] {1f, -2f}, p.values());
    }

    private static double norm(float[] a) {
        double sum = 0;
        for (float x : a) {
            sum += (double) x * x;
        }
        return Math.sqrt(sum);
    }

    private static float[] difference(float[] a, float[] b) {
        float[] d = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i] - b[i];
        }
        return d;
    }
}
