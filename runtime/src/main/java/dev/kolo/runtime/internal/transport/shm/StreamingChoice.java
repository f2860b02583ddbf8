package dev.kolo.runtime.internal.transport.shm;

/**
 * The writer's choice, under {@code KOLO_SHM_STREAM=auto}, of streaming its large pieces past its caches or copying
 * them plainly: whichever costs less for the two copies together, its own into the ring and the reader's out of it.
 *
 * <p>Neither way wins everywhere, and where the cost lies moves. Two processes on this kind of virtual machine, 1 MiB
 * at a time: plainly, the reader's copy took 24 us in every placement of the two virtual CPUs while the writer's took
 * 24 us in some and 73-97 us in others (every line it writes must first be taken from the reader's cache, at the
 * speed of the path between the cores); streamed, the writer's took 38 or 65 us and the reader's 40 (from memory).
 * A 1 MiB allreduce at np 2 took 67 us plainly where the cores sat close, 505 us where they did not, and 108 us
 * streamed in both. The placement changes between runs and within one, for seconds at a time, and cannot be seen
 * from inside the machine; what it costs can. So the writer times its copies, the reader times its own and publishes
 * them in the ring ({@link CopyCosts}), the writer takes the cheaper sum, and tries the other way again every {@link
 * #RETRY_NANOS} to notice when the placement changed.
 */
final class StreamingChoice {
    /** How often the way not taken is tried again, for a window of copies. */
    static final long RETRY_NANOS = 500_000_000L;
    /** The other way must be this much cheaper to be taken: costs within it are noise. */
    private static final double MARGIN = 0.85;

    private final CopyCosts writes = new CopyCosts();
    private boolean streaming;

    /** @return whether the writer streams its large pieces now */
    boolean streaming() {
        return streaming;
    }

    /**
     * The writer copied {@code bytes} in {@code nanos}, ending at {@code now}, the way {@link #streaming()} says;
     * {@code readPlain} and {@code readStreamed} are the reader's last costs per byte of each way (NaN if unknown).
     *
     * @return whether the way changed
     */
    boolean wrote(long bytes, long nanos, long now, double readPlain, double readStreamed) {
        if (!writes.copied(streaming, bytes, nanos, now)) {
            return false;
        }
        boolean other = !streaming;
        if (Double.isNaN(writes.cost(other)) || now - writes.measuredAt(other) > RETRY_NANOS) {
            streaming = other;
            return true;
        }
        double here = writes.cost(streaming) + known(streaming ? readStreamed : readPlain);
        double there = writes.cost(other) + known(other ? readStreamed : readPlain);
        if (there < here * MARGIN) {
            streaming = other;
            return true;
        }
        return false;
    }

    private static double known(double cost) {
        return Double.isNaN(cost) ? 0 : cost;
    }
}
