package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/** Ring reduce-scatter with per-rank block sizes: n-1 pipelined steps, rank r ends owning block r. */
final class RingReduceScatter {
    private final RingContext ring;
    private final ContiguousRegion contiguous = new ContiguousRegion();

    RingReduceScatter(RingContext ring) {
        this.ring = ring;
    }

    /** @param counts elements of each rank's block, in rank order */
    void run(long seq, ByteBuffer sendView, ByteBuffer view, DType dtype, int[] counts, ReduceOp op,
            double prescale, double postscale) {
        int size = ring.peers.size;
        int esize = dtype.byteSize();
        int[] bounds = ring.schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + counts[b] * esize;
        }
        if (prescale != 1.0) {
            view.clear();
            ring.reducer.scale(dtype, view, 0, bounds[size] / esize, prescale);
        }
        double finalScale = op == ReduceOp.AVERAGE ? postscale / size : postscale;
        ring.schedule.configure(contiguous.of(sendView, view), 0, true, false, dtype, esize, op, finalScale, ring.chunkBytes);
        try {
            ring.transport.run(ring.schedule, ring.right, ring.left, seq);
        } finally {
            contiguous.clear();
        }
    }
}
