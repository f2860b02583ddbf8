package dev.kolo.runtime.internal.transport.shm;

/**
 * The cost per byte of one side's large copies through a ring, for each way the writer may write (plainly, or
 * streamed past its caches): the least of each window of {@link #WINDOW} copies, since a copy the scheduler
 * interrupted says nothing of the memory. Only one thread feeds an instance.
 */
final class CopyCosts {
    /** Copies in a window. */
    static final int WINDOW = 4;

    private final double[] nanosPerByte = {Double.NaN, Double.NaN};
    private final long[] measuredAt = new long[2];
    private int counted;
    private double least;
    private int windowWay = -1;

    /**
     * A copy of {@code bytes} written the way {@code streamed} took {@code nanos}, ending at {@code now}; a window
     * whose copies were not all written the same way is dropped.
     *
     * @return whether this closed a window (the way's cost is new)
     */
    boolean copied(boolean streamed, long bytes, long nanos, long now) {
        int way = streamed ? 1 : 0;
        if (way != windowWay) {
            windowWay = way;
            counted = 0;
        }
        double cost = (double) nanos / bytes;
        least = counted == 0 ? cost : Math.min(least, cost);
        if (++counted < WINDOW) {
            return false;
        }
        counted = 0;
        nanosPerByte[way] = least;
        measuredAt[way] = now;
        return true;
    }

    /** @return the cost per byte of the way ({@code streamed} or not), NaN if never measured */
    double cost(boolean streamed) {
        return nanosPerByte[streamed ? 1 : 0];
    }

    /** @return when that way's cost was last measured ({@link System#nanoTime()}), 0 if never */
    long measuredAt(boolean streamed) {
        return measuredAt[streamed ? 1 : 0];
    }
}
