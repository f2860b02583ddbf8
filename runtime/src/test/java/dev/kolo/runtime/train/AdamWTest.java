package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.testing.DoubleAdam;
import org.junit.jupiter.api.Test;

class AdamWTest extends AdamFamilyContract {
    AdamWTest() {
        super("AdamW", DoubleAdam.Kind.ADAMW, AdamW::new, AdamW::new);
    }

    @Test
    void withoutWeightDecayItIsAdam() {
        RuleChecks.matchesReference(new AdamW(0), DoubleAdam.Kind.ADAM, 0);
    }

    /**
     * With no gradient, AdamW's decoupled decay shrinks every weight by exactly 1 - lr * wd, while Adam's L2 term
     * enters the moments and, normalised like a gradient, moves every weight by about lr towards zero whatever
     * its size.
     */
    @Test
    void decoupledDecayShrinksWhereL2MovesByTheLearningRate() {
        float[] w0 = {2f, -0.5f, 0.01f, -8f};
        double lr = 0.01;
        double wd = 0.1;
        Parameter decoupled = Parameter.of("w", w0.clone(), new float[4]);
        Parameter l2 = Parameter.of("w", w0.clone(), new float[4]);
        new AdamW(wd).apply(decoupled, lr);
        new Adam(wd).apply(l2, lr);
        for (int i = 0; i < 4; i++) {
            assertEquals(w0[i] * (1 - lr * wd), decoupled.values()[i], 1e-7 * Math.abs(w0[i]), "AdamW w[" + i + "]");
            assertEquals(w0[i] - lr * Math.signum(w0[i]), l2.values()[i], 1e-6, "Adam + L2 w[" + i + "]");
        }
    }

    /** With a gradient, AdamW's first step is plain Adam's plus -lr * wd * w, the decay term alone. */
    @Test
    void differsFromPlainAdamByTheDecayTermOnly() {
        float[] w0 = {2f, -0.5f, 0.01f, -8f, 0.75f};
        float[] g = {0.3f, 0.3f, -1e-3f, 5f, -2f};
        double lr = 0.05;
        double wd = 0.2;
        Parameter decoupled = Parameter.of("w", w0.clone(), g.clone());
        Parameter plain = Parameter.of("w", w0.clone(), g.clone());
        new AdamW(wd).apply(decoupled, lr);
        new Adam(0).apply(plain, lr);
        for (int i = 0; i < w0.length; i++) {
            assertEquals(-lr * wd * w0[i], decoupled.values()[i] - plain.values()[i], 2e-7 * Math.abs(w0[i]) + 1e-9,
                    "w[" + i + "]");
        }
    }
}
