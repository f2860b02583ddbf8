package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.schedule.RingContext;
import java.nio.ByteBuffer;

/** Ring reduce-scatter with per-rank block sizes: n-1 pipelined steps, rank r ends owning block r. */
public final class RingReduceScatter implements Algorithm {
    private final RingContext ring;

    public RingReduceScatter(RingContext ring) {
        this.ring = ring;
    }

    /** Reduces blocks of {@code d.counts} elements each, in rank order: this rank's block holds its result. */
    @Override
    public void run(OpDescription d) {
        DType dtype = d.dtype;
        int[] counts = d.counts;
        ByteBuffer view = d.view;
        int size = ring.peers.size;
        int esize = dtype.byteSize();
        int[] bounds = ring.schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + counts[b] * esize;
        }
        if (d.prescale != 1.0) {
            view.clear();
            ring.reducer.scale(dtype, view, 0, bounds[size] / esize, d.prescale);
        }
        double finalScale = d.op == ReduceOp.AVERAGE ? d.postscale / size : d.postscale;
        ring.schedule.configure(d.region, 0, true, false, dtype, d.op, finalScale);
        ring.peers.aroundRing(ring.schedule, d.seq);
    }
}
