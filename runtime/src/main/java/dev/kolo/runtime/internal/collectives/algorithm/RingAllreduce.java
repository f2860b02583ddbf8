package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.schedule.RingContext;
import dev.kolo.runtime.internal.transport.Schedule;

/**
 * Ring allreduce: reduce-scatter then allgather, 2(n-1) steps, each rank sending and receiving
 * 2(n-1)/n of the buffer, pipelined chunk by chunk. Each block is reduced (and scaled) by exactly one
 * rank and then copied, so every rank ends with the same bytes. The bytes are one buffer, or several
 * tensors' buffers one after the other (a fused allreduce without a fusion buffer).
 */
public final class RingAllreduce implements Algorithm {
    private final RingContext ring;

    public RingAllreduce(RingContext ring) {
        this.ring = ring;
    }

    /** Allreduces {@code op.count} elements from the region's logical byte {@code op.offset}. */
    @Override
    public void run(OpDescription op) {
        int size = ring.peers.size;
        DType dtype = op.dtype;
        int offset = op.offset;
        int esize = dtype.byteSize();
        if (op.prescale != 1.0) {
            op.region.scale(ring.reducer, dtype, offset, offset + op.count * esize, op.prescale);
        }
        double finalScale = op.op == ReduceOp.AVERAGE ? op.postscale / size : op.postscale;
        int[] bounds = ring.schedule.bounds;
        for (int b = 0; b <= size; b++) {
            bounds[b] = offset + (int) Schedule.split(op.count, size, b) * esize;
        }
        ring.schedule.configure(op.region, 1, true, true, dtype, op.op, finalScale);
        ring.peers.aroundRing(ring.schedule, op.seq);
        op.reduceScatterEndNanos = ring.schedule.reduceScatterEndNanos; // its allgather began then
    }
}
