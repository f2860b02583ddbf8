package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;
import java.nio.ByteBuffer;

/** Ring reduce-scatter with per-rank block sizes: n-1 pipelined steps, rank r ends owning block r. */
final class RingReduceScatter {
    private final Transport transport;
    private final Link left;
    private final Link right;
    private final BlockRingSchedule schedule;
    private final Reducer reducer;
    private final int chunkBytes;
    private final ContiguousRegion contiguous = new ContiguousRegion();

    RingReduceScatter(Transport transport, Link left, Link right, BlockRingSchedule schedule, Reducer reducer,
            int chunkBytes) {
        this.transport = transport;
        this.left = left;
        this.right = right;
        this.schedule = schedule;
        this.reducer = reducer;
        this.chunkBytes = chunkBytes;
    }

    /** @param counts elements of each rank's block, in rank order */
    void run(long seq, ByteBuffer sendView, ByteBuffer view, DType dtype, int[] counts, ReduceOp op,
            double prescale, double postscale) {
        int size = transport.size;
        int esize = dtype.byteSize();
        int[] bounds = schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + counts[b] * esize;
        }
        if (prescale != 1.0) {
            view.clear();
            reducer.scale(dtype, view, 0, bounds[size] / esize, prescale);
        }
        double finalScale = op == ReduceOp.AVERAGE ? postscale / size : postscale;
        schedule.configure(contiguous.of(sendView, view), 0, true, false, dtype, esize, op, finalScale, chunkBytes);
        try {
            transport.run(schedule, right, left, seq);
        } finally {
            contiguous.clear();
        }
    }
}
