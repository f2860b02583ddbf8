package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;

/**
 * The ring over {@code size} blocks: a reduce-scatter phase (each step sends a partially reduced block to
 * the right and reduces the one arriving from the left) and/or an allgather phase (each step forwards a
 * finished block). Each block is cut into the same number K of chunks, so unit {@code u} is chunk
 * {@code u % K} of step {@code u / K} and a send depends only on receive unit {@code u - K}: the pipeline
 * overlaps sending, receiving and reducing chunk by chunk.
 *
 * <p>After reduce-scatter, rank r holds block {@code own}: r + 1 for allreduce (so the allgather can start
 * at once), r for reducescatter and allgather. Blocks are never empty-by-construction-dependent: sizes
 * may differ per block and be zero.
 */
public final class BlockRingSchedule extends Schedule {
    private final int size;
    private final int rank;
    private final Reducer reducer;
    private final ByteBuffer staging;
    /** The reader of the unit being received, whose payload {@link #received} reduces. */
    private FrameReader reader;
    /** Byte offset of each block in the user buffer; block b is [bounds[b], bounds[b + 1]). */
    public final int[] bounds;

    private int own;
    private int rsSteps;
    private int chunks;
    private int elementSize;
    /** Where the op's bytes live. */
    private Region region;
    private DType dtype;
    private ReduceOp op;
    private double finalScale;
    /** Pipeline chunk: at most the staging buffer. */
    private final int chunkBytes;
    /** When the last reduce-scatter unit was reduced (System.nanoTime), -1 before: the timeline's phase split. */
    public long reduceScatterEndNanos = -1;

    BlockRingSchedule(int size, int rank, Reducer reducer, ByteBuffer staging, int chunkBytes) {
        this.chunkBytes = chunkBytes;
        this.size = size;
        this.rank = rank;
        this.reducer = reducer;
        this.staging = staging;
        this.bounds = new int[size + 1];
    }

    /**
     * @param ownShift 1 for allreduce, 0 otherwise
     * @param rs whether to reduce-scatter
     * @param ag whether to allgather
     * @param dtype element type (for allgather, any type with the right element size, or null for bytes)
     */
    public void configure(Region region, int ownShift, boolean rs, boolean ag, DType dtype, ReduceOp op,
            double finalScale) {
        int elementSize = dtype == null ? 1 : dtype.byteSize();
        this.region = region;
        this.own = mod(rank + ownShift, size);
        this.rsSteps = rs ? size - 1 : 0;
        this.dtype = dtype;
        this.elementSize = elementSize;
        this.op = op;
        this.finalScale = finalScale;
        int maxElements = 0;
        for (int b = 0; b < size; b++) {
            maxElements = Math.max(maxElements, (bounds[b + 1] - bounds[b]) / elementSize);
        }
        int chunkElements = Math.max(1, chunkBytes / elementSize);
        this.chunks = Math.max(1, (maxElements + chunkElements - 1) / chunkElements);
        int steps = rsSteps + (ag ? size - 1 : 0);
        this.sendUnits = steps * chunks;
        this.recvUnits = steps * chunks;
        this.reduceScatterEndNanos = -1;
    }

    @Override
    protected boolean sendReady(int u, int received) {
        return u < chunks || received > u - chunks;
    }

    @Override
    protected void beginSend(int u, FrameWriter w, long generation, long seq) {
        int step = u / chunks;
        int block = step < rsSteps ? mod(own - 1 - step, size) : mod(own - (step - rsSteps), size);
        region.send(w, generation, seq, u, chunkOffset(block, u % chunks), chunkOffset(block, u % chunks + 1));
    }

    @Override
    protected void beginRecv(int u, FrameReader r) {
        int step = u / chunks;
        int c = u % chunks;
        if (step < rsSteps) {
            int block = mod(own - 2 - step, size);
            r.beginInPlace(staging, chunkOffset(block, c + 1) - chunkOffset(block, c));
            reader = r;
        } else {
            int block = mod(own - (step - rsSteps) - 1, size);
            region.receive(r, chunkOffset(block, c), chunkOffset(block, c + 1));
        }
    }

    @Override
    protected void received(int u) {
        int step = u / chunks;
        if (step >= rsSteps) {
            return; // allgather: the payload already landed in place
        }
        int c = u % chunks;
        int block = mod(own - 2 - step, size);
        int off = chunkOffset(block, c);
        int end = chunkOffset(block, c + 1);
        ReceivedChunk.reduceInto(region, reducer, dtype, op, off, end, reader);
        if (step == rsSteps - 1 && finalScale != 1.0) {
            region.scale(reducer, dtype, off, end, finalScale); // once, by the owner: every rank gets the same bytes
        }
        if (u == rsSteps * chunks - 1) {
            reduceScatterEndNanos = System.nanoTime(); // units arrive in order: this was the phase's last
        }
    }

    /** Start of chunk {@code c} of {@code block}; c == chunks gives the block's end. Element-aligned. */
    private int chunkOffset(int block, int c) {
        int elements = (bounds[block + 1] - bounds[block]) / elementSize;
        return bounds[block] + (int) split(elements, chunks, c) * elementSize;
    }
}
