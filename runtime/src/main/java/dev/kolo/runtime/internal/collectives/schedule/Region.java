package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import java.nio.ByteBuffer;

/**
 * Where the bytes of one collective live, as the logical byte range a {@link Schedule} cuts into blocks and
 * chunks: one buffer ({@link ContiguousRegion}), or the buffers of several tensors one after the other
 * ({@link SegmentedRegion}: a fused allreduce reduced in the tensors themselves, without a fusion buffer).
 * Every method takes logical offsets, element-aligned.
 */
public abstract class Region {
    /** Starts a frame whose payload is the logical bytes {@code [from, to)}. */
    abstract void send(FrameWriter w, long generation, long seq, int chunk, int from, int to);

    /** Starts receiving a frame whose payload lands in the logical bytes {@code [from, to)}. */
    abstract void receive(FrameReader r, int from, int to);

    /** {@code region[from, to) = region[from, to) op src[srcOffset, srcOffset + to - from)}. */
    abstract void reduce(Reducer reducer, DType dtype, ReduceOp op, int from, int to, ByteBuffer src, int srcOffset);

    /** {@code region[from, to) *= factor}. */
    public abstract void scale(Reducer reducer, DType dtype, int from, int to, double factor);
}
