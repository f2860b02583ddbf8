package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/**
 * An allreduce that works in a {@link Region}, so that it runs over one buffer or over several tensors' own
 * buffers one after the other (a fused batch reduced without a fusion buffer): the ring and Rabenseifner's.
 * It keeps the two regions and lets go of the caller's buffers after each op.
 */
abstract class RegionAllreduce {
    private final ContiguousRegion contiguous = new ContiguousRegion();
    private final SegmentedRegion segmented = new SegmentedRegion();

    final void run(long seq, ByteBuffer sendView, ByteBuffer view, int offset, DType dtype, int count, ReduceOp op,
            double prescale, double postscale) {
        try {
            run(seq, contiguous.of(sendView, view), offset, dtype, count, op, prescale, postscale);
        } finally {
            contiguous.clear();
        }
    }

    /** Over segments: segment s is {@code views[s][0, lengths[s])}; see {@link SegmentedRegion}. */
    final void run(long seq, ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
            ReduceOp op, double prescale, double postscale) {
        try {
            long bytes = segmented.of(sendViews, views, lengths, segments);
            run(seq, segmented, 0, dtype, (int) (bytes / dtype.byteSize()), op, prescale, postscale);
        } finally {
            segmented.clear();
        }
    }

    /** The allreduce of {@code count} elements from the region's logical byte {@code offset}. */
    abstract void run(long seq, Region region, int offset, DType dtype, int count, ReduceOp op, double prescale,
            double postscale);

    /** @return when the last run's reduce-scatter phase ended (System.nanoTime), or -1 */
    abstract long reduceScatterEndNanos();
}
