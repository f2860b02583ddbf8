package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Hierarchy;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.RoundCombiner;
import dev.kolo.runtime.internal.collectives.algorithm.Algorithm;
import dev.kolo.runtime.internal.collectives.algorithm.HostLayout;
import dev.kolo.runtime.internal.collectives.algorithm.OpDescription;
import dev.kolo.runtime.internal.collectives.algorithm.RoundCombine;
import dev.kolo.runtime.internal.collectives.schedule.ContiguousRegion;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.SegmentedRegion;
import dev.kolo.runtime.internal.transport.Transport;
import dev.kolo.runtime.internal.transport.connect.PeerLinks;
import java.nio.ByteBuffer;

/**
 * The collectives of one generation over its peer links (Gloo's algorithms over a context): built over the
 * {@code PeerLinks} that {@code Endpoint.connect} made, one per generation; closed (or aborted) when the
 * generation ends. It is the engine's {@link DataPlane} as well, numbering the engine's ops itself.
 *
 * <p><b>Calling convention.</b> Every rank of the generation calls the same op with the same sequence
 * number (agreed by the control plane, increasing per op) and matching arguments. Ops run on the calling
 * thread and must not overlap on one ring (one op thread per worker); {@link #abort} and {@link #close}
 * may be called from any thread. Buffers must be direct and writable; ops work in place on absolute byte
 * offsets from 0 and leave position, limit and byte order as they were. Reusing the same buffer (e.g. a
 * fusion buffer) across ops allocates nothing per op; the ring keeps a reference to the last buffer used.
 *
 * <p><b>Algorithms.</b> Built once per generation, in its {@link AlgorithmTable}; each call fills the plane's one
 * {@link OpDescription} and runs the {@link Algorithm} the table picks. Allreduce by size, as
 * {@link AllreduceAlgorithms} chooses: up to 8 KiB on up to 4 ranks,
 * one direct exchange with every peer, then a local reduction in rank order (one network hop); small buffers on
 * more ranks, recursive doubling; medium ones, Rabenseifner's halving and doubling; large ones (and every size
 * above the direct exchange at 2 ranks), the pipelined ring reduce-scatter + allgather.
 * Allgather: recursive doubling on 3 or more ranks up to Rabenseifner's bound, else the pipelined ring.
 * Broadcast: a binomial tree on 3 or more ranks up to the recursive-doubling bound, else a pipelined chain along
 * the ring. Reducescatter: pipelined ring. Alltoall: pairwise exchanges. The ring connections carry the neighbours' direct exchanges (in both directions);
 * with 4 or more ranks, {@code Endpoint.connect} also connects every pair of non-neighbours.
 *
 * <p><b>Failure.</b> An op whose peer connection closes, fails, or makes no progress within the progress
 * timeout throws {@link WorkerLostException} naming the peer rank and host as seen by this rank (a rank
 * that is not a neighbour of the dead one names the neighbour through which the failure reached it; the
 * control plane's membership view knows the real culprit). Any failure aborts the ring: its sockets are
 * closed, so every other rank fails within moments too, and every later op throws at once.
 */
public final class GenerationDataPlane implements DataPlane {

    private final PeerLinks links;
    private final Transport transport;
    private final Reducer reducer;
    /** The generation's algorithms, built once, and which takes which call. */
    private final AlgorithmTable algorithms;
    /**
     * The call in progress, filled anew for each (one op at a time on a plane); its phase marks stay after it, for
     * the timeline.
     */
    private final OpDescription call = new OpDescription();
    private final ContiguousRegion contiguous = new ContiguousRegion();
    private final SegmentedRegion segmented = new SegmentedRegion();
    private final int[] sendBounds;
    private final int[] recvBounds;
    private final ByteBuffer barrierBuffer;
    /** The algorithm of the last call, for the flight recorder; read on the calling thread. */
    private Algorithm lastAlgorithm;
    private final BufferViews first = new BufferViews();
    private final BufferViews second = new BufferViews();
    private final BufferViews barrierViews = new BufferViews();
    /** The next op's sequence number when the engine drives the plane as a {@link DataPlane}. */
    private long sequence;
    private final int[] countsA;
    private final int[] countsB;

    /**
     * @param links the generation's connections, from {@code Endpoint.connect}
     * @param reducer the element-wise arithmetic
     * @param chunkBytes the largest frame payload (the transport's chunk size)
     */
    public GenerationDataPlane(PeerLinks links, Reducer reducer, int chunkBytes) {
        this(links, reducer, chunkBytes, AllreduceAlgorithms.defaults());
    }

    /**
     * @param links the generation's connections, from {@code Endpoint.connect}
     * @param reducer the element-wise arithmetic
     * @param chunkBytes the largest frame payload (the transport's chunk size)
     * @param algorithms which allreduce algorithm takes which size
     */
    public GenerationDataPlane(PeerLinks links, Reducer reducer, int chunkBytes, AllreduceAlgorithms algorithms) {
        this(links, reducer, chunkBytes, algorithms, Hierarchy.AUTO);
    }

    /**
     * @param links the generation's connections, from {@code Endpoint.connect}
     * @param reducer the element-wise arithmetic
     * @param chunkBytes the largest frame payload (the transport's chunk size)
     * @param algorithms which allreduce algorithm takes which size
     * @param hierarchy how allreduces above the small sizes span hosts that hold several ranks
     */
    public GenerationDataPlane(PeerLinks links, Reducer reducer, int chunkBytes, AllreduceAlgorithms algorithms, Hierarchy hierarchy) {
        this.links = links;
        this.transport = links.transport();
        this.reducer = reducer;
        int size = transport.size;
        HostLayout layout = hierarchy == Hierarchy.OFF ? null : HostLayout.of(links.hosts(), hierarchy == Hierarchy.LEADERS);
        this.algorithms = new AlgorithmTable(Peers.of(links), reducer, chunkBytes, algorithms, layout);
        this.sendBounds = new int[size + 1];
        this.recvBounds = new int[size + 1];
        this.barrierBuffer = ByteBuffer.allocateDirect(1);
        this.countsA = new int[size];
        this.countsB = new int[size];
    }

    // The engine's entry points (DataPlane): ops numbered in the order the engine runs them, which is the
    // same on every rank; the numbered methods below check each frame against that number.

    @Override
    public void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
            double postscale) {
        allreduce(sequence++, buf, offset, count, dtype, op, prescale, postscale);
    }

    @Override
    public void allreduce(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
            ReduceOp op, double prescale, double postscale) {
        allreduce(sequence++, sendViews, views, lengths, segments, dtype, op, prescale, postscale);
    }

    @Override
    public void allgather(ByteBuffer buf, long[] bytesPerRank) {
        allgather(sequence++, buf, RegionChecks.toInts(bytesPerRank, countsA));
    }

    @Override
    public void broadcast(ByteBuffer buf, int offset, int bytes, int root) {
        broadcast(sequence++, buf, offset, bytes, root);
    }

    @Override
    public void reducescatter(ByteBuffer buf, long[] elementsPerRank, DType dtype, ReduceOp op, double prescale,
            double postscale) {
        reducescatter(sequence++, buf, dtype, RegionChecks.toInts(elementsPerRank, countsA), op, prescale, postscale);
    }

    @Override
    public void alltoall(ByteBuffer send, long[] sendBytes, ByteBuffer recv, long[] recvBytes) {
        alltoall(sequence++, send, RegionChecks.toInts(sendBytes, countsA), recv, RegionChecks.toInts(recvBytes, countsB));
    }

    /** @return the generation's connections (tests drive them with rings of other algorithm tables) */
    PeerLinks links() {
        return links;
    }

    /** @return this rank in the generation */
    public int rank() {
        return transport.rank;
    }

    /** @return number of ranks in the generation */
    public int size() {
        return transport.size;
    }

    /** @return the generation this ring belongs to */
    public long generation() {
        return transport.generation;
    }

    /**
     * Allreduce in place: on return every rank's {@code buffer[offset, offset + count * dtype.byteSize())}
     * holds the same bytes: {@code postscale * op(prescale * x_0, ..., prescale * x_{n-1})}, AVERAGE being
     * SUM scaled by {@code 1/size} as well.
     *
     * @param seq op sequence number agreed by the control plane
     * @param offset byte offset of the first element
     * @throws WorkerLostException if a peer is lost or the ring was aborted
     */
    public void allreduce(long seq, ByteBuffer buffer, int offset, int count, DType dtype, ReduceOp op,
            double prescale, double postscale) {
        RegionChecks.checkAllreduce(buffer, offset, count, dtype, op);
        links.checkOpen();
        BufferViews v = first.of(buffer);
        call.of(seq); // no phase marks from an earlier op
        if (size() == 1 || count == 0) {
            if (count > 0) {
                scaleLocally(v.read, offset, dtype, count, prescale,
                        op == ReduceOp.AVERAGE ? postscale / size() : postscale);
            }
            return;
        }
        long bytes = (long) count * dtype.byteSize();
        transport.beginOp(bytes);
        call.of(seq).buffers(v.write, v.read, contiguous.of(v.write, v.read)).elements(offset, count, dtype)
                .reduce(op, prescale, postscale);
        run(algorithms.allreduce(bytes, true, op));
    }

    /**
     * Allreduce in place over several buffers taken as one, without copying them together: segment s is
     * {@code views[s][0, lengths[s])}, the segments follow each other in this order (the same on every rank),
     * and the result is as if they were one buffer. Each segment comes with two views of its buffer
     * ({@code sendViews[s]} and {@code views[s]}, distinct duplicates, kept for it by the caller); each length is
     * a whole number of elements. This is how a fused batch of large tensors is reduced in the tensors
     * themselves.
     *
     * @throws WorkerLostException if a peer is lost or the ring was aborted
     */
    public void allreduce(long seq, ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments,
            DType dtype, ReduceOp op, double prescale, double postscale) {
        long total = RegionChecks.checkSegments(sendViews, views, lengths, segments, dtype, op);
        links.checkOpen();
        call.of(seq); // no phase marks from an earlier op
        if (size() == 1 || total == 0) {
            double finalScale = op == ReduceOp.AVERAGE ? postscale / size() : postscale;
            for (int s = 0; s < segments && total > 0; s++) {
                scaleLocally(views[s], 0, dtype, lengths[s] / dtype.byteSize(), prescale, finalScale);
            }
            return;
        }
        transport.beginOp(total);
        if (op == ReduceOp.ADASUM) {
            call.of(seq).buffers(sendViews[0], views[0], null).elements(0, lengths[0] / dtype.byteSize(), dtype);
        } else {
            segmented.of(sendViews, views, lengths, segments);
            call.of(seq).buffers(null, null, segmented).elements(0, (int) (total / dtype.byteSize()), dtype);
        }
        call.reduce(op, prescale, postscale);
        run(algorithms.allreduce(total, false, op));
    }

    /** Runs the described call with {@code algorithm}; a failure ends the generation. Lets go of the call's buffers. */
    private void run(Algorithm algorithm) {
        lastAlgorithm = algorithm;
        try {
            algorithm.run(call);
        } catch (RuntimeException e) {
            throw links.failed(e);
        } finally {
            call.clear();
            contiguous.clear();
            segmented.clear();
        }
    }

    @Override
    public String lastAlgorithm() {
        return lastAlgorithm == null ? "none" : lastAlgorithm.getClass().getSimpleName(); // cached by the JDK
    }

    /** @return whether this generation's allreduces above the small sizes are hierarchical (its hosts hold several ranks) */
    public boolean hierarchicalAllreduce() {
        return algorithms.hierarchical();
    }

    /**
     * When the last {@link #allreduce(long, ByteBuffer, int, int, DType, ReduceOp, double, double) allreduce}
     * finished its reduce-scatter phase and began its allgather ({@link System#nanoTime()}), or -1 when it took
     * no ring path (one rank, no elements, or the direct path for small buffers). Read on the calling thread.
     */
    @Override
    public long lastReduceScatterEndNanos() {
        return call.reduceScatterEndNanos;
    }

    @Override
    public long lastCrossHostEndNanos() {
        return call.crossHostEndNanos;
    }

    /** Allreduce of {@code buffer[0, count * dtype.byteSize())}, see {@link #allreduce(long, ByteBuffer, int, int, DType, ReduceOp, double, double)}. */
    public void allreduce(long seq, ByteBuffer buffer, DType dtype, int count, ReduceOp op, double prescale,
            double postscale) {
        allreduce(seq, buffer, 0, count, dtype, op, prescale, postscale);
    }

    /** {@link #allreduce(long, ByteBuffer, DType, int, ReduceOp, double, double)} without scaling. */
    public void allreduce(long seq, ByteBuffer buffer, DType dtype, int count, ReduceOp op) {
        allreduce(seq, buffer, dtype, count, op, 1.0, 1.0);
    }

    /**
     * Allgather in place: the buffer holds every rank's block concatenated in rank order, block r being
     * {@code byteCounts[r]} bytes (any, zero included; known to all ranks from negotiation). On entry this
     * rank's own block must be in place; on return all blocks are.
     */
    public void allgather(long seq, ByteBuffer buffer, int[] byteCounts) {
        allgather(seq, buffer, byteCounts, first);
    }

    private void allgather(long seq, ByteBuffer buffer, int[] byteCounts, BufferViews views) {
        long total = RegionChecks.checkAllgather(buffer, byteCounts, size());
        links.checkOpen();
        BufferViews v = views.of(buffer);
        if (size() == 1 || total == 0) {
            return;
        }
        transport.beginOp(total);
        call.of(seq).buffers(v.write, v.read, contiguous.of(v.write, v.read)).counts(byteCounts);
        run(algorithms.allgather(total));
    }

    /** Copies {@code buffer[0, bytes)} of rank {@code root} into the same region of every other rank. */
    public void broadcast(long seq, ByteBuffer buffer, int bytes, int root) {
        broadcast(seq, buffer, 0, bytes, root);
    }

    /** Copies {@code buffer[offset, offset + bytes)} of rank {@code root} into the same region of every other rank. */
    public void broadcast(long seq, ByteBuffer buffer, int offset, int bytes, int root) {
        RegionChecks.checkBroadcast(buffer, offset, bytes, root, size());
        links.checkOpen();
        BufferViews v = first.of(buffer);
        if (size() == 1 || bytes == 0) {
            return;
        }
        transport.beginOp(bytes);
        call.of(seq).buffers(v.write, v.read, contiguous.of(v.write, v.read)).broadcast(offset, bytes, root);
        run(algorithms.broadcast(bytes));
    }

    /**
     * Reduce-scatter in place: the buffer holds {@code sum(counts)} elements, block r being {@code counts[r]}
     * elements in rank order. On return this rank's block (at element offset {@code counts[0] + ... +
     * counts[rank-1]}) holds the reduced, scaled result; the rest of the buffer is scratch. See
     * {@link RegionChecks#reducescatterCounts} for Horovod's split of dim 0.
     */
    public void reducescatter(long seq, ByteBuffer buffer, DType dtype, int[] counts, ReduceOp op, double prescale,
            double postscale) {
        long total = RegionChecks.checkReducescatter(buffer, dtype, counts, op, size());
        links.checkOpen();
        BufferViews v = first.of(buffer);
        if (size() == 1 || total == 0) {
            if (total > 0) {
                scaleLocally(v.read, 0, dtype, (int) total, prescale,
                        op == ReduceOp.AVERAGE ? postscale / size() : postscale);
            }
            return;
        }
        transport.beginOp(total * dtype.byteSize());
        call.of(seq).buffers(v.write, v.read, contiguous.of(v.write, v.read)).elements(0, (int) total, dtype)
                .reduce(op, prescale, postscale).counts(counts);
        run(algorithms.reducescatter);
    }

    /**
     * Alltoall: {@code send} holds the blocks for ranks 0..n-1 concatenated ({@code sendBytes[j]} bytes for
     * rank j, zero allowed); on return {@code recv} holds the blocks from ranks 0..n-1 concatenated
     * ({@code recvBytes[j]} bytes from rank j, which must equal rank j's {@code sendBytes[rank]}). The
     * buffers must not overlap.
     */
    public void alltoall(long seq, ByteBuffer send, int[] sendBytes, ByteBuffer recv, int[] recvBytes) {
        RegionChecks.checkAlltoall(send, sendBytes, recv, recvBytes, size(), rank());
        links.checkOpen();
        ByteBuffer out = first.of(send).write;
        ByteBuffer in = second.of(recv).read;
        for (int j = 0; j < size(); j++) {
            sendBounds[j + 1] = sendBounds[j] + sendBytes[j];
            recvBounds[j + 1] = recvBounds[j] + recvBytes[j];
        }
        transport.beginOp(sendBounds[size()] + recvBounds[size()]);
        call.of(seq).buffers(out, null, null).alltoall(in, sendBounds, recvBounds);
        run(algorithms.alltoall);
    }

    /** Returns once every rank has entered the barrier with the same {@code seq}: a one-byte allreduce. */
    public void barrier(long seq) {
        links.checkOpen();
        if (size() == 1) {
            return;
        }
        BufferViews v = barrierViews.of(barrierBuffer);
        transport.beginOp(1);
        call.of(seq).buffers(v.write, v.read, contiguous.of(v.write, v.read)).elements(0, 1, DType.UINT8)
                .reduce(ReduceOp.MAX, 1.0, 1.0);
        run(algorithms.barrier());
    }

    /**
     * The buffer for this rank's next {@link #combineRound} message, at least {@code capacity} bytes, written with
     * absolute puts from offset 0. Grown (reallocated) only when a larger one is asked for.
     */
    @Override
    public ByteBuffer roundOutbox(int capacity) {
        return algorithms.rounds.outbox(capacity);
    }

    /**
     * Combines this rank's round message with every other rank's by recursive doubling (see
     * {@link RoundCombine}); every rank calls it with the same {@code maxBytes}.
     *
     * @throws WorkerLostException if a peer is lost, stalls, or the ring was aborted
     * @throws dev.kolo.runtime.KoloException from the combiner when two messages cannot be combined; the
     *         generation is aborted, so every rank's round fails at once
     */
    @Override
    public int combineRound(int length, int maxBytes, RoundCombiner combiner) {
        long seq = sequence++;
        links.checkOpen();
        if (size() == 1) {
            return length;
        }
        transport.beginOp(length);
        try {
            return algorithms.rounds.run(seq, length, maxBytes, combiner);
        } catch (RuntimeException e) {
            throw links.failed(e);
        }
    }

    @Override
    public ByteBuffer roundResult() {
        return algorithms.rounds.result();
    }

    @Override
    public int roundMessagesSent() {
        return algorithms.rounds.messagesSent();
    }

    @Override
    public boolean awaitPeer(long timeoutNanos) {
        return links.awaitIncoming(timeoutNanos);
    }

    @Override
    public void wakeup() {
        transport.wakeup();
    }

    @Override
    public boolean idleWait(long timeoutNanos) {
        return links.idleWait(timeoutNanos);
    }

    @Override
    public void idleWakeup() {
        transport.idleWakeup();
    }

    @Override
    public void polling(long spinNanos, boolean yield, long spinFirstNanos) {
        transport.polling(spinNanos, yield, spinFirstNanos);
    }

    @Override
    public String transport() {
        return links.transportLabel();
    }

    /** Aborts the generation from any thread with this reason; see {@link PeerLinks#abort(String)}. */
    public void abort(String reason) {
        links.abort(reason);
    }

    @Override
    public void abort(KoloException cause) {
        links.abort(cause);
    }

    @Override
    public void peerClosing(int rank) {
        links.transport().peerClosing(rank);
    }

    /** @return whether the ring was aborted or closed (by a failure, an abort or {@link #close}) */
    public boolean isAborted() {
        return links.isAborted();
    }

    /** Closes the generation's connections; later ops throw {@link WorkerLostException}. Idempotent. */
    @Override
    public void close() {
        links.close();
        first.clear();
        second.clear();
    }

    /** Test hook: this rank closes all its sockets abruptly once it has sent {@code frames} frames of an op. */
    void crashAfterFrames(int frames) {
        transport.crashAfterFrames(frames);
    }

    private void scaleLocally(ByteBuffer view, int offset, DType dtype, int count, double prescale,
            double finalScale) {
        view.clear();
        if (prescale != 1.0) {
            reducer.scale(dtype, view, offset, count, prescale);
        }
        if (finalScale != 1.0) {
            reducer.scale(dtype, view, offset, count, finalScale);
        }
    }

}
