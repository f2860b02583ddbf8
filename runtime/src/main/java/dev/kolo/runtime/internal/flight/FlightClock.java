package dev.kolo.runtime.internal.flight;

import java.time.Instant;

/**
 * Turns the engine's {@link System#nanoTime()} stamps into wall-clock microseconds, by one pair of readings taken
 * when a dump starts: the ranks' files then share one clock (exactly on one host, up to the hosts' clock offsets
 * across hosts), while the hot path reads only the monotonic clock.
 */
public record FlightClock(long epochMicros, long nanos) {
    /** @return the clocks as they read now */
    public static FlightClock now() {
        long nanos = System.nanoTime();
        Instant now = Instant.now();
        return new FlightClock(now.getEpochSecond() * 1_000_000 + now.getNano() / 1000, nanos);
    }

    /** @return {@code nanoTime} as microseconds since the epoch, or 0 for a moment not recorded (0) */
    public long micros(long nanoTime) {
        return nanoTime == 0 ? 0 : epochMicros + (nanoTime - nanos) / 1000;
    }
}
