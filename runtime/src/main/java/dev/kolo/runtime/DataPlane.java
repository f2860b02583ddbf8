package dev.kolo.runtime;

import java.nio.ByteBuffer;

/**
 * The byte-moving primitives of one generation, as the control plane drives them once every rank has
 * agreed on an op. Buffers are direct and little-endian; every rank calls the same primitive with the
 * same sizes in the same order. Implementations fail with {@link WorkerLostException} when a peer is lost,
 * never hang, and allocate nothing per call.
 */
interface DataPlane extends AutoCloseable {

    /**
     * Reduces {@code count} elements at {@code offset} in place across all ranks. Inputs are multiplied by
     * {@code prescale} before and the result by {@code postscale} after (1.0 skips the pass); {@code op} is
     * SUM, MIN, MAX or PRODUCT.
     */
    void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
                   double postscale);

    /**
     * When the last {@link #allreduce} moved from its reduce-scatter to its allgather phase
     * ({@link System#nanoTime()}), or -1 when it ran no such phases; for the timeline.
     */
    default long lastReduceScatterEndNanos() {
        return -1;
    }

    /**
     * {@code buf} holds every rank's block back to back, block r being {@code bytesPerRank[r]} long; this
     * rank has filled its own, and on return all blocks are filled.
     */
    void allgather(ByteBuffer buf, long[] bytesPerRank);

    /** Copies {@code bytes} at {@code offset} of the root's buffer into every rank's. */
    void broadcast(ByteBuffer buf, int offset, int bytes, int root);

    /**
     * {@code buf} holds the whole input, blocks of {@code elementsPerRank[r]} elements back to back; on
     * return this rank's block holds the reduced (and scaled) result. Other blocks are scratch.
     */
    void reducescatter(ByteBuffer buf, long[] elementsPerRank, DType dtype, ReduceOp op, double prescale,
                       double postscale);

    /**
     * Sends block r of {@code send} ({@code sendBytes[r]} long) to rank r and receives rank r's block into
     * block r of {@code recv} ({@code recvBytes[r]} long).
     */
    void alltoall(ByteBuffer send, long[] sendBytes, ByteBuffer recv, long[] recvBytes);

    /** Wakes any thread blocked in this data plane with {@code cause}; later calls fail with it too. */
    void abort(KoloException cause);

    @Override
    void close();
}
