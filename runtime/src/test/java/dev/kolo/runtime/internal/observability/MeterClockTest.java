package dev.kolo.runtime.internal.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The meters' clock follows the system clock within {@link MeterClock#READ_EVERY} asks, and not at every ask. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MeterClockTest {
    @Test
    void theWallTimeCatchesUpWithinReadEveryAsks() {
        MeterClock clock = new MeterClock();
        long before = clock.wallTime();
        long later = before + 2;
        while (System.currentTimeMillis() < later) {
            Thread.onSpinWait(); // the system clock moves on; nothing here reads the meters' clock
        }
        long last = before;
        for (int i = 0; i < MeterClock.READ_EVERY; i++) {
            last = clock.wallTime();
        }
        assertTrue(last >= later, "within " + MeterClock.READ_EVERY + " asks the clock reads " + last
                + ", not the system's " + later + " or later");
    }

    @Test
    void asksBetweenReadingsGetTheSameTime() {
        MeterClock clock = new MeterClock();
        long first = clock.wallTime(); // ask 1: the next reading is at ask READ_EVERY
        long later = System.currentTimeMillis() + 2;
        while (System.currentTimeMillis() < later) {
            Thread.onSpinWait();
        }
        for (int i = 2; i < MeterClock.READ_EVERY; i++) {
            assertEquals(first, clock.wallTime(), "ask " + i + " read the system clock");
        }
    }

    @Test
    void theMonotonicTimeIsTheSystemsAtEveryAsk() {
        MeterClock clock = new MeterClock();
        long a = clock.monotonicTime();
        long b = System.nanoTime();
        long c = clock.monotonicTime();
        assertTrue(a <= b && b <= c, a + " " + b + " " + c);
    }
}
