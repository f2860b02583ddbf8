package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Kolo#reportStep} and {@link Kolo#reportScalar} on a job of one: bad input gets an error naming the rule
 * and the fix, and what was reported before stays; good input reaches the metrics.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReportedProgressTest {
    private static LocalJob job;

    @BeforeAll
    static void start() {
        job = LocalJob.start(1);
    }

    @AfterAll
    static void stop() {
        job.close();
    }

    @Test
    void scalarsAndStepsBecomeMetrics() {
        Kolo kolo = job.workers.get(0);
        kolo.reportStep(7, 64);
        kolo.reportScalar("loss", 0.25);
        assertEquals(7.0, kolo.meterRegistry().get("kolo.program.step").gauge().value());
        assertEquals(0.25, kolo.meterRegistry().get("kolo.program.scalar").tag("name", "loss").gauge().value());
        assertTrue(kolo.meterRegistry().get("kolo.program.samples").functionCounter().count() >= 64);
    }

    @Test
    void badNamesAndCountsAreRefusedWithTheRule() {
        Kolo kolo = job.workers.get(0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> kolo.reportScalar("loss per step 3", 1.0));
        assertTrue(e.getMessage().contains("letters, digits"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> kolo.reportScalar(null, 1.0));
        e = assertThrows(IllegalArgumentException.class, () -> kolo.reportStep(-1, 3));
        assertTrue(e.getMessage().contains("never negative"), e.getMessage());
        for (int i = 0; i < 40; i++) {
            try {
                kolo.reportScalar("s" + i, i);
            } catch (IllegalArgumentException tooMany) {
                assertTrue(tooMany.getMessage().contains("at most 32"), tooMany.getMessage());
                kolo.reportScalar("s0", 5.0); // a known name still reports
                assertEquals(5.0, kolo.meterRegistry().get("kolo.program.scalar").tag("name", "s0").gauge().value());
                return;
            }
        }
        throw new AssertionError("a 33rd scalar name was accepted");
    }
}
