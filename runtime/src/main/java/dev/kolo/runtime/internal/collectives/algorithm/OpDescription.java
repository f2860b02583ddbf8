package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.schedule.Region;
import java.nio.ByteBuffer;

/**
 * What one collective call asks of an {@link Algorithm}: where its bytes are, how many, how they combine. One per
 * plane, filled for each call ({@link #of} resets it) and read by the algorithm that runs it, so that a call allocates
 * nothing and no method takes the whole list; an algorithm reads the fields its kind of op sets. Let go of the caller's
 * buffers ({@link #clear}) once the call returns.
 */
public final class OpDescription {
    /** The op's sequence number in the generation: every frame of it carries it. */
    long seq;
    /** The buffer frames are sent from, and the one read, reduced and received into: two views of the same bytes. */
    ByteBuffer sendView;
    ByteBuffer view;
    /** The same bytes as a region the schedules cut (or a fused batch's tensors one after the other). */
    Region region;
    /** Byte offset of the first element, or of a broadcast's bytes. */
    int offset;
    /** Elements of a reduction. */
    int count;
    /** Bytes of a broadcast. */
    int bytes;
    DType dtype;
    ReduceOp op;
    double prescale = 1.0;
    double postscale = 1.0;
    int root;
    /** Per rank: the bytes of each block of an allgather, the elements of each block of a reducescatter. */
    public int[] counts;
    /** An alltoall's receive buffer and both block bounds (block j at {@code [bounds[j], bounds[j + 1])}). */
    ByteBuffer recvView;
    int[] sendBounds;
    int[] recvBounds;
    /** Set by the algorithm: when its reduce-scatter phase ended (System.nanoTime), or -1 when it has none. */
    public long reduceScatterEndNanos = -1;
    /**
     * Set by an allreduce across hosts: when its exchange between hosts ended and its allgather within the host began
     * (System.nanoTime), or -1 when it has none.
     */
    public long crossHostEndNanos = -1;

    /** Starts the description of op {@code seq}: every other field back to its default. */
    public OpDescription of(long seq) {
        clear();
        this.seq = seq;
        offset = 0;
        count = 0;
        bytes = 0;
        dtype = null;
        op = null;
        prescale = 1.0;
        postscale = 1.0;
        root = 0;
        reduceScatterEndNanos = -1;
        crossHostEndNanos = -1;
        return this;
    }

    /** Where the bytes are: {@code region} over {@code sendView} and {@code view} (null for a segmented region). */
    public OpDescription buffers(ByteBuffer sendView, ByteBuffer view, Region region) {
        this.sendView = sendView;
        this.view = view;
        this.region = region;
        return this;
    }

    /** {@code count} elements of {@code dtype} from byte {@code offset}. */
    public OpDescription elements(int offset, int count, DType dtype) {
        this.offset = offset;
        this.count = count;
        this.dtype = dtype;
        return this;
    }

    /** How they combine: {@code postscale * op(prescale * x_0, ...)}, AVERAGE dividing by the size too. */
    public OpDescription reduce(ReduceOp op, double prescale, double postscale) {
        this.op = op;
        this.prescale = prescale;
        this.postscale = postscale;
        return this;
    }

    /** A broadcast's {@code bytes} from byte {@code offset}, from rank {@code root}. */
    public OpDescription broadcast(int offset, int bytes, int root) {
        this.offset = offset;
        this.bytes = bytes;
        this.root = root;
        return this;
    }

    public OpDescription counts(int[] counts) {
        this.counts = counts;
        return this;
    }

    /** An alltoall: blocks of {@code sendView} (by {@code sendBounds}) out, into {@code recvView} (by {@code recvBounds}). */
    public OpDescription alltoall(ByteBuffer recvView, int[] sendBounds, int[] recvBounds) {
        this.recvView = recvView;
        this.sendBounds = sendBounds;
        this.recvBounds = recvBounds;
        return this;
    }

    /** Lets go of the caller's buffers and arrays. */
    public void clear() {
        sendView = null;
        view = null;
        region = null;
        counts = null;
        recvView = null;
        sendBounds = null;
        recvBounds = null;
    }
}
