package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LearningRateScheduleTest {

    @Test
    void linearAndSqrtScaling() {
        assertEquals(0.8, LearningRateSchedule.builder(0.1).scaling(LrScaling.LINEAR, 8).build().targetRate(), 1e-12);
        assertEquals(0.1 * Math.sqrt(8), LearningRateSchedule.builder(0.1).scaling(LrScaling.SQRT, 8).build()
                .targetRate(), 1e-12);
        assertEquals(0.1, LearningRateSchedule.builder(0.1).scaling(LrScaling.NONE, 8).build().targetRate(), 1e-12);
    }

    @Test
    void warmupRisesLinearlyFromTheBaseRateToTheScaledOne() {
        LearningRateSchedule s = LearningRateSchedule.builder(0.1).scaling(LrScaling.LINEAR, 4).warmupEpochs(2)
                .stepsPerEpoch(100).build();
        assertEquals(0.1, s.rate(0), 1e-12);
        assertEquals(0.1 + 0.3 * 0.25, s.rate(50), 1e-12);   // half an epoch of two
        assertEquals(0.25, s.rate(100), 1e-12);
        assertEquals(0.4, s.rate(200), 1e-12);
        assertEquals(0.4, s.rate(1000), 1e-12);
        for (long step = 1; step <= 200; step++) {
            assertTrue(s.rate(step) > s.rate(step - 1), "warm-up must rise at step " + step);
        }
    }

    @Test
    void cosineDecayReachesZeroAtTheEnd() {
        LearningRateSchedule s = LearningRateSchedule.builder(0.1).scaling(LrScaling.LINEAR, 2).warmupEpochs(1)
                .stepsPerEpoch(10).cosineDecay(5).build();
        assertEquals(0.2, s.rate(10), 1e-12);
        assertEquals(0.1, s.rate(30), 1e-12);      // half-way through the decay
        assertEquals(0, s.rate(50), 1e-12);
        assertEquals(0, s.rate(70), 1e-12);
    }

    @Test
    void rescaledForANewNumberOfWorkers() {
        LearningRateSchedule s = LearningRateSchedule.builder(0.05).scaling(LrScaling.LINEAR, 4).warmupEpochs(1)
                .stepsPerEpoch(100).build();
        LearningRateSchedule smaller = s.rescaled(2, 200);
        assertEquals(0.1, smaller.targetRate(), 1e-12);
        assertEquals(0.1, smaller.rate(200), 1e-12);      // still one epoch of warm-up, now 200 steps long
        assertEquals(0.075, smaller.rate(100), 1e-12);
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.builder(0));
        assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.builder(0.1)
                .scaling(LrScaling.LINEAR, 0.5));
        assertThrows(IllegalArgumentException.class, () -> LearningRateSchedule.builder(0.1).warmupEpochs(-1));
        assertThrows(IllegalArgumentException.class, () -> LrScaling.parse("cubic"));
        assertEquals(LrScaling.SQRT, LrScaling.parse(" SQRT "));
        assertEquals(Compression.BF16, Compression.parse("bf16"));
        assertThrows(IllegalArgumentException.class, () -> Compression.parse("int8"));
    }
}
