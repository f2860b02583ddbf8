package dev.kolo.runtime.internal.observability;

import io.micrometer.core.instrument.Clock;

/**
 * The meters' clock. Each record of a timer asks for the wall time twice (its histogram's and its maximum's time
 * windows), which is four readings of the system clock per small op, 20 ns each of a 700 ns op; this one reads it
 * again only every {@link #READ_EVERY}th ask. The windows it decides are tens of seconds long (Micrometer's: a third
 * of two minutes), so a rotation that comes a few asks late changes nothing a scrape shows, and every scrape asks
 * for the time of each meter's windows anyway.
 *
 * <p>Any thread: a count lost to a race only delays the next reading.
 */
final class MeterClock implements Clock {
    /** Asks between readings of the system clock; a power of two. */
    static final int READ_EVERY = 64;

    private volatile long wallMillis = System.currentTimeMillis();
    private int asks;

    @Override
    public long wallTime() {
        if ((++asks & (READ_EVERY - 1)) == 0) {
            wallMillis = System.currentTimeMillis();
        }
        return wallMillis;
    }

    @Override
    public long monotonicTime() {
        return System.nanoTime();
    }
}
