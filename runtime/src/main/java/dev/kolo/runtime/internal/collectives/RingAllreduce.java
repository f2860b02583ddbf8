package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.Schedule;

/**
 * Ring allreduce: reduce-scatter then allgather, 2(n-1) steps, each rank sending and receiving
 * 2(n-1)/n of the buffer, pipelined chunk by chunk. Each block is reduced (and scaled) by exactly one
 * rank and then copied, so every rank ends with the same bytes. The bytes are one buffer, or several
 * tensors' buffers one after the other (a fused allreduce without a fusion buffer).
 */
final class RingAllreduce extends RegionAllreduce {
    private final RingContext ring;

    RingAllreduce(RingContext ring) {
        this.ring = ring;
    }

    @Override
    void run(long seq, Region region, int offset, DType dtype, int count, ReduceOp op, double prescale,
            double postscale) {
        int size = ring.peers.size;
        int esize = dtype.byteSize();
        if (prescale != 1.0) {
            region.scale(ring.reducer, dtype, offset, offset + count * esize, prescale);
        }
        double finalScale = op == ReduceOp.AVERAGE ? postscale / size : postscale;
        int[] bounds = ring.schedule.bounds;
        for (int b = 0; b <= size; b++) {
            bounds[b] = offset + (int) Schedule.split(count, size, b) * esize;
        }
        ring.schedule.configure(region, 1, true, true, dtype, esize, op, finalScale, ring.chunkBytes);
        ring.transport.run(ring.schedule, ring.right, ring.left, seq);
    }

    /** When the last run's reduce-scatter phase ended (its allgather began), System.nanoTime. */
    @Override
    long reduceScatterEndNanos() {
        return ring.schedule.reduceScatterEndNanos;
    }
}
