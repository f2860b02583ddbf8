package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.PairStep;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.PowerOfTwoGroup;
import dev.kolo.runtime.internal.transport.Schedule;

/**
 * Rabenseifner's allreduce: a reduce-scatter by recursive halving (step k exchanges half of what is left with
 * the rank {@code 2^k} group ranks away and reduces the half it keeps), then an allgather by recursive doubling.
 * {@code 2 log2 p} steps where the ring takes {@code 2(n-1)}, and the ring's bytes per rank ({@code 2(p-1)/p}
 * of the buffer) on a power of two; other sizes fold first ({@link PowerOfTwoGroup}), which costs two whole-buffer
 * steps, so the ring stays the choice for large buffers there. Each block is reduced (and scaled) by exactly one
 * rank and then copied, so every rank ends with the same bytes.
 */
public final class RabenseifnerAllreduce implements Algorithm {
    private final Peers peers;
    private final PowerOfTwoGroup group;
    private final PairStep step;
    private final Reducer reducer;
    private final int[] bounds;

    public RabenseifnerAllreduce(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.reducer = reducer;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
        this.step = new PairStep(reducer, peers.staging());
        this.bounds = new int[group.p + 1];
    }

    /**
     * Allreduces {@code d.count} elements from the region's logical byte {@code d.offset}; a rank that folds away has
     * no reduce-scatter end ({@code d.reduceScatterEndNanos} stays -1).
     */
    @Override
    public void run(OpDescription d) {
        int esize = d.dtype.byteSize();
        int end = d.offset + d.count * esize;
        d.reduceScatterEndNanos = -1;
        step.over(d.region, esize, d.dtype, d.op);
        if (d.prescale != 1.0) {
            d.region.scale(reducer, d.dtype, d.offset, end, d.prescale);
        }
        if (group.folds()) {
            boolean hands = group.foldedAway();
            exchange(d.seq, group.foldPartner(), hands ? d.offset : 0, hands ? end : 0,
                    hands ? 0 : d.offset, hands ? 0 : end, true);
        }
        if (!group.foldedAway()) {
            int p = group.p;
            int me = group.groupRank;
            for (int b = 0; b <= p; b++) {
                bounds[b] = d.offset + (int) Schedule.split(d.count, p, b) * esize;
            }
            int lo = 0;
            int hi = p;
            for (int mask = p >> 1; mask >= 1; mask >>= 1) {
                int mid = (lo + hi) >>> 1;
                int partner = group.rankOf(me ^ mask);
                if ((me & mask) == 0) {
                    exchange(d.seq, partner, bounds[mid], bounds[hi], bounds[lo], bounds[mid], true);
                    hi = mid;
                } else {
                    exchange(d.seq, partner, bounds[lo], bounds[mid], bounds[mid], bounds[hi], true);
                    lo = mid;
                }
            }
            d.reduceScatterEndNanos = System.nanoTime();
            double finalScale = d.op == ReduceOp.AVERAGE ? d.postscale / peers.size : d.postscale;
            if (finalScale != 1.0) {
                d.region.scale(reducer, d.dtype, bounds[lo], bounds[hi], finalScale); // once, by the block's owner
            }
            for (int mask = 1; mask < p; mask <<= 1) {
                int width = hi - lo;
                int partner = group.rankOf(me ^ mask);
                if ((me & mask) == 0) {
                    exchange(d.seq, partner, bounds[lo], bounds[hi], bounds[hi], bounds[hi + width], false);
                    hi += width;
                } else {
                    exchange(d.seq, partner, bounds[lo], bounds[hi], bounds[lo - width], bounds[lo], false);
                    lo -= width;
                }
            }
        }
        if (group.folds()) {
            boolean receives = group.foldedAway();
            exchange(d.seq, group.foldPartner(), receives ? 0 : d.offset, receives ? 0 : end,
                    receives ? d.offset : 0, receives ? end : 0, false);
        }
    }

    private void exchange(long seq, int partner, int sendFrom, int sendTo, int recvFrom, int recvTo, boolean reduce) {
        step.step(sendFrom, sendTo, recvFrom, recvTo, reduce);
        peers.exchange(step, partner, seq);
    }
}
