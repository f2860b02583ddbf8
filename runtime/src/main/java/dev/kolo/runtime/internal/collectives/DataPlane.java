package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/**
 * The byte-moving primitives of one generation, as the control plane drives them once every rank has
 * agreed on an op. Buffers are direct and little-endian; every rank calls the same primitive with the
 * same sizes in the same order. Implementations fail with {@link WorkerLostException} when a peer is lost,
 * never hang, and allocate nothing per call.
 */
public interface DataPlane extends AutoCloseable {

    /**
     * Reduces {@code count} elements at {@code offset} in place across all ranks. Inputs are multiplied by
     * {@code prescale} before and the result by {@code postscale} after (1.0 skips the pass); {@code op} is
     * SUM, MIN, MAX or PRODUCT.
     */
    void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
                   double postscale);

    /**
     * Reduces several buffers in place as if they were one, without copying them together: segment s is
     * {@code views[s][0, lengths[s])}, in this order on every rank; {@code sendViews[s]} is a second view of the
     * same buffer (a distinct duplicate). Used for a fused batch of large tensors, reduced in the tensors.
     */
    void allreduce(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype, ReduceOp op,
                   double prescale, double postscale);

    /**
     * When the last {@link #allreduce} moved from its reduce-scatter to its allgather phase
     * ({@link System#nanoTime()}), or -1 when it ran no such phases; for the timeline.
     */
    default long lastReduceScatterEndNanos() {
        return -1;
    }

    /**
     * When the last {@link #allreduce} across hosts moved from its exchange between hosts to its allgather within the
     * host ({@link System#nanoTime()}), or -1 when it ran no such phase; for the timeline.
     */
    default long lastCrossHostEndNanos() {
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

    /**
     * The buffer for this rank's next agreement-round message, at least {@code capacity} bytes (absolute writes
     * from offset 0). Rounds are numbered with the ops, so they take their place in the same sequence.
     */
    ByteBuffer roundOutbox(int capacity);

    /**
     * Combines {@code roundOutbox()[0, length)} with every other rank's message of this round by the engine's
     * {@code combiner} (each message at most {@code maxBytes}, the same bound on every rank), in {@code log2 n}
     * exchanges; afterwards every rank holds the same combined message at {@link #roundResult()}.
     *
     * @return the combined message's length
     */
    int combineRound(int length, int maxBytes, RoundCombiner combiner);

    /** @return the buffer holding the last {@link #combineRound}'s combined message, from offset 0 */
    ByteBuffer roundResult();

    /** @return how many messages this rank sent in the last {@link #combineRound} */
    int roundMessagesSent();

    /**
     * By the thread that runs ops, between them: waits up to {@code timeoutNanos} (0: only looks) for a peer to
     * start the next op or round, or for {@link #wakeup()}. @return whether a peer has sent something
     */
    boolean awaitPeer(long timeoutNanos);

    /** Ends an {@link #awaitPeer} now, from any thread; nothing to do for a plane without peers. */
    default void wakeup() {
    }

    /**
     * By a thread that does not run ops: waits up to {@code timeoutNanos} for any bytes from a peer, or for
     * {@link #idleWakeup()}. @return whether a peer has sent something
     */
    boolean idleWait(long timeoutNanos);

    /** Ends an {@link #idleWait} now, from any thread; nothing to do for a plane without peers. */
    default void idleWakeup() {
    }

    /** How waits for peers poll before they park: see {@code GenerationDataPlane.polling}; no waits without peers. */
    default void polling(long spinNanos, boolean yield, long spinFirstNanos) {
    }

    /** @return the algorithm of the last call on this thread (its class's name), for the flight recorder */
    default String lastAlgorithm() {
        return "local";
    }

    /**
     * @return how this generation's bytes move, for metrics and the timeline: {@code local} (a job of one),
     *         {@code shm} (every peer through shared memory), {@code tcp} or {@code tls} (none), or both joined
     *         by {@code +} (some peers share this rank's host, some do not)
     */
    default String transport() {
        return "local";
    }

    /**
     * Rank {@code rank} announced that it closes (its program called close): when its connections end, this
     * data plane ends the generation as for a lost peer, but reports it as that rank's close and logs no warning.
     */
    default void peerClosing(int rank) {
    }

    /** Wakes any thread blocked in this data plane with {@code cause}; later calls fail with it too. */
    void abort(KoloException cause);

    @Override
    void close();
}
