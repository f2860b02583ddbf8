package dev.kolo.runtime.internal.ring;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data connections of one generation and the collectives over them. Obtained from
 * {@link RingEndpoint#openRing}; one per generation; closed (or aborted) when the generation ends.
 *
 * <p><b>Calling convention.</b> Every rank of the generation calls the same op with the same sequence
 * number (agreed by the control plane, increasing per op) and matching arguments. Ops run on the calling
 * thread and must not overlap on one ring (one op thread per worker); {@link #abort} and {@link #close}
 * may be called from any thread. Buffers must be direct and writable; ops work in place on absolute byte
 * offsets from 0 and leave position, limit and byte order as they were. Reusing the same buffer (e.g. a
 * fusion buffer) across ops allocates nothing per op; the ring keeps a reference to the last buffer used.
 *
 * <p><b>Algorithms.</b> Allreduce up to 8 KiB: one direct exchange with every peer, then a local
 * reduction in rank order (one network hop); larger: pipelined ring reduce-scatter + allgather.
 * Allgather and reducescatter: pipelined ring. Broadcast: pipelined chain along the ring. Alltoall:
 * pairwise exchanges. The ring connections carry the neighbours' direct exchanges (in both directions);
 * with 4 or more ranks, {@link RingEndpoint#openRing} also connects every pair of non-neighbours.
 *
 * <p><b>Failure.</b> An op whose peer connection closes, fails, or makes no progress within the progress
 * timeout throws {@link WorkerLostException} naming the peer rank and host as seen by this rank (a rank
 * that is not a neighbour of the dead one names the neighbour through which the failure reached it; the
 * control plane's membership view knows the real culprit). Any failure aborts the ring: its sockets are
 * closed, so every other rank fails within moments too, and every later op throws at once.
 */
public final class Ring implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Ring.class);

    private final RingEndpoint plane;
    private final String job;
    private final List<PeerAddress> peers;
    private final DataPlaneOptions options;
    private final Transport transport;
    private final Link left;
    private final Link right;
    private final Reducer reducer;
    private final RingAllreduce allreduce;
    private final RingReduceScatter reducescatter;
    private final RingAllgather allgather;
    private final ChainBroadcast broadcast;
    private final PairwiseAlltoall alltoall;
    private final DirectAllreduce direct;
    private final PeerExchange rounds;
    private final Link[] sendLinks;
    private final Link[] recvLinks;
    private final int[] sendBounds;
    private final int[] recvBounds;
    private final ByteBuffer barrierBuffer;
    /** Set by the last allreduce, read by the timeline; -1 when it took no ring path. */
    private long lastReduceScatterEndNanos = -1;
    private final Views first = new Views();
    private final Views second = new Views();
    private final Views barrierViews = new Views();

    Ring(RingEndpoint plane, String job, List<PeerAddress> peers, DataPlaneOptions options, Transport transport,
            Link left, Link right) {
        this.plane = plane;
        this.job = job;
        this.peers = peers;
        this.options = options;
        this.transport = transport;
        this.left = left;
        this.right = right;
        this.reducer = options.reducer();
        int size = transport.size;
        int chunk = options.chunkBytes();
        BlockRingSchedule blocks = new BlockRingSchedule(size, transport.rank, reducer, transport.staging);
        this.allreduce = new RingAllreduce(transport, left, right, blocks, reducer, chunk);
        this.reducescatter = new RingReduceScatter(transport, left, right, blocks, reducer, chunk);
        this.allgather = new RingAllgather(transport, left, right, blocks, chunk);
        this.broadcast = new ChainBroadcast(transport, left, right, chunk);
        this.alltoall = new PairwiseAlltoall(transport, chunk);
        this.direct = new DirectAllreduce(transport, reducer);
        this.sendLinks = new Link[size];
        this.recvLinks = new Link[size];
        if (size > 1) {
            sendLinks[right.peerRank] = right;
            recvLinks[left.peerRank] = left;
            // The neighbours' connections also serve the reverse direction (alltoall steps 1 and n-1).
            if (sendLinks[left.peerRank] == null) {
                sendLinks[left.peerRank] = left;
            }
            if (recvLinks[right.peerRank] == null) {
                recvLinks[right.peerRank] = right;
            }
        }
        this.sendBounds = new int[size + 1];
        this.recvBounds = new int[size + 1];
        this.barrierBuffer = ByteBuffer.allocateDirect(1);
        this.rounds = new PeerExchange(transport, sendLinks, recvLinks);
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
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        checkRegion(buffer, offset, (long) count * dtype.byteSize(), "allreduce");
        checkOpen();
        Views v = first.of(buffer);
        lastReduceScatterEndNanos = -1;
        if (size() == 1 || count == 0) {
            if (count > 0) {
                scaleLocally(v.read, offset, dtype, count, prescale,
                        op == ReduceOp.AVERAGE ? postscale / size() : postscale);
            }
            return;
        }
        transport.beginOp((long) count * dtype.byteSize());
        try {
            if ((long) count * dtype.byteSize() <= DirectAllreduce.MAX_BYTES) {
                direct.run(seq, v.write, v.read, offset, dtype, count, op, prescale, postscale, sendLinks, recvLinks);
                return;
            }
            allreduce.run(seq, v.write, v.read, offset, dtype, count, op, prescale, postscale);
            lastReduceScatterEndNanos = allreduce.reduceScatterEndNanos();
        } catch (RuntimeException e) {
            throw failed(e);
        }
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
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        long total = 0;
        for (int s = 0; s < segments; s++) {
            if (lengths[s] % dtype.byteSize() != 0 || sendViews[s] == views[s]) {
                throw new IllegalArgumentException("segment " + s + " of an allreduce: its length " + lengths[s]
                        + " is not a whole number of " + dtype + " elements, or its two views are one buffer object");
            }
            checkRegion(sendViews[s], lengths[s], "allreduce segment " + s);
            checkRegion(views[s], lengths[s], "allreduce segment " + s);
            total += lengths[s];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("an allreduce of " + total + " bytes exceeds " + Integer.MAX_VALUE);
        }
        checkOpen();
        lastReduceScatterEndNanos = -1;
        if (size() == 1 || total == 0) {
            double finalScale = op == ReduceOp.AVERAGE ? postscale / size() : postscale;
            for (int s = 0; s < segments && total > 0; s++) {
                scaleLocally(views[s], 0, dtype, lengths[s] / dtype.byteSize(), prescale, finalScale);
            }
            return;
        }
        transport.beginOp(total);
        try {
            allreduce.run(seq, sendViews, views, lengths, segments, dtype, op, prescale, postscale);
            lastReduceScatterEndNanos = allreduce.reduceScatterEndNanos();
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * When the last {@link #allreduce(long, ByteBuffer, int, int, DType, ReduceOp, double, double) allreduce}
     * finished its reduce-scatter phase and began its allgather ({@link System#nanoTime()}), or -1 when it took
     * no ring path (one rank, no elements, or the direct path for small buffers). Read on the calling thread.
     */
    public long lastReduceScatterEndNanos() {
        return lastReduceScatterEndNanos;
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

    private void allgather(long seq, ByteBuffer buffer, int[] byteCounts, Views views) {
        if (byteCounts != null && byteCounts.length != size()) {
            throw new IllegalArgumentException("byteCounts has " + byteCounts.length + " entries for " + size() + " ranks");
        }
        long total = sumChecked(byteCounts, "byteCounts");
        checkRegion(buffer, total, "allgather");
        checkOpen();
        Views v = views.of(buffer);
        if (size() == 1 || total == 0) {
            return;
        }
        transport.beginOp(total);
        try {
            allgather.run(seq, v.write, v.read, byteCounts);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** Copies {@code buffer[0, bytes)} of rank {@code root} into the same region of every other rank. */
    public void broadcast(long seq, ByteBuffer buffer, int bytes, int root) {
        broadcast(seq, buffer, 0, bytes, root);
    }

    /** Copies {@code buffer[offset, offset + bytes)} of rank {@code root} into the same region of every other rank. */
    public void broadcast(long seq, ByteBuffer buffer, int offset, int bytes, int root) {
        if (root < 0 || root >= size()) {
            throw new IllegalArgumentException("root rank " + root + " is not in [0, " + size() + ")");
        }
        checkRegion(buffer, offset, bytes, "broadcast");
        checkOpen();
        Views v = first.of(buffer);
        if (size() == 1 || bytes == 0) {
            return;
        }
        transport.beginOp(bytes);
        try {
            broadcast.run(seq, v.write, v.read, offset, bytes, root);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * Reduce-scatter in place: the buffer holds {@code sum(counts)} elements, block r being {@code counts[r]}
     * elements in rank order. On return this rank's block (at element offset {@code counts[0] + ... +
     * counts[rank-1]}) holds the reduced, scaled result; the rest of the buffer is scratch. See
     * {@link #reducescatterCounts} for Horovod's split of dim 0.
     */
    public void reducescatter(long seq, ByteBuffer buffer, DType dtype, int[] counts, ReduceOp op, double prescale,
            double postscale) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        checkLength(counts, "counts");
        long total = sumChecked(counts, "counts");
        checkRegion(buffer, total * dtype.byteSize(), "reducescatter");
        checkOpen();
        Views v = first.of(buffer);
        if (size() == 1 || total == 0) {
            if (total > 0) {
                scaleLocally(v.read, 0, dtype, (int) total, prescale,
                        op == ReduceOp.AVERAGE ? postscale / size() : postscale);
            }
            return;
        }
        transport.beginOp(total * dtype.byteSize());
        try {
            reducescatter.run(seq, v.write, v.read, dtype, counts, op, prescale, postscale);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * Element counts per rank for a reducescatter of a tensor with {@code rows} rows of {@code rowElements}
     * elements: rank r gets {@code rows / size} rows, the first {@code rows % size} ranks one more.
     */
    public static int[] reducescatterCounts(long rows, long rowElements, int size) {
        int[] counts = new int[size];
        for (int r = 0; r < size; r++) {
            long myRows = rows / size + (r < rows % size ? 1 : 0);
            counts[r] = Math.toIntExact(myRows * rowElements);
        }
        return counts;
    }

    /**
     * Alltoall: {@code send} holds the blocks for ranks 0..n-1 concatenated ({@code sendBytes[j]} bytes for
     * rank j, zero allowed); on return {@code recv} holds the blocks from ranks 0..n-1 concatenated
     * ({@code recvBytes[j]} bytes from rank j, which must equal rank j's {@code sendBytes[rank]}). The
     * buffers must not overlap.
     */
    public void alltoall(long seq, ByteBuffer send, int[] sendBytes, ByteBuffer recv, int[] recvBytes) {
        checkLength(sendBytes, "sendBytes");
        checkLength(recvBytes, "recvBytes");
        checkRegion(send, sumChecked(sendBytes, "sendBytes"), "alltoall send");
        checkRegion(recv, sumChecked(recvBytes, "recvBytes"), "alltoall recv");
        if (send == recv) {
            throw new IllegalArgumentException("alltoall send and recv buffers must differ");
        }
        int rank = rank();
        if (sendBytes[rank] != recvBytes[rank]) {
            throw new IllegalArgumentException("alltoall: this rank sends itself " + sendBytes[rank]
                    + " bytes but expects " + recvBytes[rank]);
        }
        checkOpen();
        ByteBuffer out = first.of(send).write;
        ByteBuffer in = second.of(recv).read;
        for (int j = 0; j < size(); j++) {
            sendBounds[j + 1] = sendBounds[j] + sendBytes[j];
            recvBounds[j + 1] = recvBounds[j] + recvBytes[j];
        }
        transport.beginOp(sendBounds[size()] + recvBounds[size()]);
        try {
            alltoall.run(seq, out, sendBounds, in, recvBounds, sendLinks, recvLinks);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** Returns once every rank has entered the barrier with the same {@code seq}: a one-byte allreduce. */
    public void barrier(long seq) {
        checkOpen();
        if (size() == 1) {
            return;
        }
        Views v = barrierViews.of(barrierBuffer);
        transport.beginOp(1);
        try {
            direct.run(seq, v.write, v.read, 0, DType.UINT8, 1, ReduceOp.MAX, 1.0, 1.0, sendLinks, recvLinks);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * The buffer for this rank's next {@link #exchange} message, at least {@code capacity} bytes, written with
     * absolute puts from offset 0. Grown (reallocated) only when a larger one is asked for.
     */
    public ByteBuffer exchangeOutbox(int capacity) {
        return rounds.outbox(capacity);
    }

    /**
     * Sends {@code exchangeOutbox()[0, length)} to every other rank and receives each one's message of the same
     * {@code seq}, of any length up to {@code maxBytes} (its header says how long; a longer one is a protocol
     * error). Every rank calls it with the same {@code seq} and {@code maxBytes}. Afterwards rank j's message
     * is {@code exchangeInbox()[exchangeOffset(j), + exchangeLength(j))}; this rank's own is not copied there.
     *
     * @throws WorkerLostException if a peer is lost, stalls, or the ring was aborted
     */
    public void exchange(long seq, int length, int maxBytes) {
        checkOpen();
        if (size() == 1) {
            return;
        }
        transport.beginOp(length);
        try {
            rounds.run(seq, length, maxBytes);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** @return the buffer holding every peer's message of the last {@link #exchange} */
    public ByteBuffer exchangeInbox() {
        return rounds.inbox();
    }

    /** @return where rank {@code peer}'s message of the last {@link #exchange} starts in {@link #exchangeInbox()} */
    public int exchangeOffset(int peer) {
        return rounds.offset(peer);
    }

    /** @return how long rank {@code peer}'s message of the last {@link #exchange} is */
    public int exchangeLength(int peer) {
        return rounds.length(peer);
    }

    /**
     * Between ops, on the op thread: waits up to {@code timeoutNanos} (0: only looks) for a peer to start the
     * next op, i.e. for bytes (or the end of a connection) from any peer, or for {@link #wakeup()}.
     *
     * @return true when a peer has sent something; the next op (which must be the one it started) reads it
     * @throws WorkerLostException if the ring was aborted
     */
    public boolean awaitIncoming(long timeoutNanos) {
        checkOpen();
        if (size() == 1) {
            return false;
        }
        try {
            return transport.awaitIncoming(recvLinks, timeoutNanos);
        } catch (IOException e) {
            throw failed(new WorkerLostException("generation " + generation() + ": waiting for peers failed: " + e,
                    -1, null));
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** Ends an {@link #awaitIncoming} (or an op's wait for its sockets) now, from any thread. */
    public void wakeup() {
        transport.wakeup();
    }

    /**
     * For a thread that does not run ops but must learn when a peer starts one: waits up to
     * {@code timeoutNanos} for bytes on any connection of the ring (or its end), or for {@link #idleWakeup()}.
     * It may run beside an op on another thread (it then returns early, which is harmless).
     *
     * @return true when a connection has something to read
     * @throws WorkerLostException if the ring was aborted
     */
    public boolean idleWait(long timeoutNanos) {
        if (size() == 1) {
            checkOpen();
            return false;
        }
        try {
            return transport.idleWait(timeoutNanos);
        } catch (IOException e) {
            throw failed(new WorkerLostException("generation " + generation() + ": waiting for peers failed: " + e,
                    -1, null));
        }
    }

    /** Ends an {@link #idleWait} now, from any thread. */
    public void idleWakeup() {
        transport.idleWakeup();
    }

    /**
     * How the op thread waits for its peers' bytes: it polls for {@code spinNanos} after the last byte moved
     * (spinning on its core, or yielding it when {@code yield}) before it parks in the selector. 0 parks at
     * once. Poll by spinning only when every rank on the host has a core of its own.
     */
    public void polling(long spinNanos, boolean yield) {
        transport.polling(spinNanos, yield);
    }

    /**
     * Aborts the generation from any thread: closes its connections (peers notice at once), wakes an op
     * blocked on this ring, which throws {@link WorkerLostException} with this reason, as does every later
     * op. Idempotent; the first cause wins.
     */
    public void abort(String reason) {
        abortWith(new WorkerLostException("generation " + generation() + " aborted: " + reason, -1, null));
    }

    /**
     * Like {@link #abort(String)}, keeping the control plane's cause: a {@link WorkerLostException} is thrown
     * as is (rank and host preserved) by the op in flight and every later one.
     */
    public void abort(KoloException cause) {
        Objects.requireNonNull(cause, "cause");
        WorkerLostException w = cause instanceof WorkerLostException wl ? wl
                : new WorkerLostException("generation " + generation() + " aborted: " + cause.getMessage(), -1, null);
        if (w != cause) {
            w.initCause(cause);
        }
        abortWith(w);
    }

    /** @return whether the ring was aborted or closed (by a failure, {@link #abort} or {@link #close}) */
    public boolean isAborted() {
        return transport.abortCause() != null;
    }

    /** Closes the generation's connections; later ops throw {@link WorkerLostException}. Idempotent. */
    @Override
    public void close() {
        abortWith(new WorkerLostException("the ring of generation " + generation() + " is closed", -1, null));
        transport.closeSelector();
        first.clear();
        second.clear();
        plane.forget(this);
    }

    /** Test hook: this rank closes all its sockets abruptly once it has sent {@code frames} frames of an op. */
    void crashAfterFrames(int frames) {
        transport.crashAfterFrames = frames;
    }

    private void abortWith(WorkerLostException cause) {
        if (transport.abort(cause) == cause && cause.lostRank() >= 0) {
            LOG.warn("data plane: rank {} aborts generation {}: {}", rank(), generation(), cause.getMessage());
        }
    }

    private KoloException failed(RuntimeException e) {
        WorkerLostException aborted = transport.abortCause();
        if (aborted != null && !(e instanceof WorkerLostException)) {
            // Aborted from another thread while this op ran: what broke under it (a buffer reset, a channel
            // closed mid-call) is the abort's doing, and the abort's reason is what the caller must see.
            return Transport.copy(aborted);
        }
        if (e instanceof WorkerLostException w) {
            abortWith(w);
            return w;
        }
        // A bug or bad argument in the middle of an op leaves the streams out of step: abort as well.
        abortWith(new WorkerLostException("generation " + generation() + " aborted after an internal error: " + e,
                -1, null));
        throw e;
    }

    private void checkOpen() {
        WorkerLostException cause = transport.abortCause();
        if (cause != null) {
            throw Transport.copy(cause);
        }
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

    /**
     * Opens direct connections to the non-neighbours (none below 4 ranks): the lower rank connects, the
     * higher one accepts. Called by {@link RingEndpoint#openRing} so that no op ever waits for a connection.
     */
    void openMesh() {
        int rank = rank();
        int size = size();
        Greeter g = new Greeter(job, generation(), rank, peers, plane.pending(), options, plane.auth());
        Wire[] connected = new Wire[size];
        try {
            for (int j = rank + 1; j < size; j++) {
                if (sendLinks[j] == null) {
                    connected[j] = g.connect(j, Handshake.KIND_DIRECT);
                }
            }
            for (int j = 0; j < rank; j++) {
                if (sendLinks[j] == null) {
                    addDirect(new Link(g.accept(j, Handshake.KIND_DIRECT), j, peers.get(j).host()));
                }
            }
            for (int j = rank + 1; j < size; j++) {
                if (connected[j] != null) {
                    g.awaitAck(connected[j], j);
                    addDirect(new Link(connected[j], j, peers.get(j).host()));
                    connected[j] = null;
                }
            }
        } catch (RuntimeException e) {
            for (Wire ch : connected) {
                Io.closeQuietly(ch);
            }
            throw e;
        }
    }

    private void addDirect(Link link) {
        try {
            transport.add(link);
        } catch (IOException e) {
            link.close();
            throw transport.lost(link, "could not be set up (" + e + ")", -1, e);
        }
        sendLinks[link.peerRank] = link;
        recvLinks[link.peerRank] = link;
    }

    private void checkLength(int[] a, String what) {
        Objects.requireNonNull(a, what);
        if (a.length != size()) {
            throw new IllegalArgumentException(what + " has " + a.length + " entries for " + size() + " ranks");
        }
    }

    private static long sumChecked(int[] counts, String what) {
        Objects.requireNonNull(counts, what);
        long total = 0;
        for (int c : counts) {
            if (c < 0) {
                throw new IllegalArgumentException(what + " has a negative entry");
            }
            total += c;
        }
        return total;
    }

    private void checkRegion(ByteBuffer b, long bytes, String op) {
        checkRegion(b, 0, bytes, op);
    }

    private void checkRegion(ByteBuffer b, int offset, long bytes, String op) {
        Objects.requireNonNull(b, "buffer");
        if (!b.isDirect() || b.isReadOnly()) {
            throw new IllegalArgumentException(op + " needs a direct, writable buffer");
        }
        if (offset < 0 || bytes < 0 || offset + bytes > b.capacity()) {
            throw new IllegalArgumentException(op + " of " + bytes + " bytes at " + offset + " does not fit a buffer of "
                    + b.capacity() + " bytes");
        }
    }

    /** Cached little-endian duplicates of the last buffer used, so a reused buffer costs no allocation. */
    private static final class Views {
        private ByteBuffer source;
        ByteBuffer read;
        ByteBuffer write;

        Views of(ByteBuffer buffer) {
            if (buffer != source) {
                source = buffer;
                read = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                write = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            }
            return this;
        }

        void clear() {
            source = null;
            read = null;
            write = null;
        }
    }
}
