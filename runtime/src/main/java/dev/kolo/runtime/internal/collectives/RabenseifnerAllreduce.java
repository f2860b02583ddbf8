package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Schedule;
import dev.kolo.runtime.internal.transport.Transport;

/**
 * Rabenseifner's allreduce: a reduce-scatter by recursive halving (step k exchanges half of what is left with
 * the rank {@code 2^k} group ranks away and reduces the half it keeps), then an allgather by recursive doubling.
 * {@code 2 log2 p} steps where the ring takes {@code 2(n-1)}, and the ring's bytes per rank ({@code 2(p-1)/p}
 * of the buffer) on a power of two; other sizes fold first ({@link PowerOfTwoGroup}), which costs two whole-buffer
 * steps, so the ring stays the choice for large buffers there. Each block is reduced (and scaled) by exactly one
 * rank and then copied, so every rank ends with the same bytes.
 */
final class RabenseifnerAllreduce extends RegionAllreduce {
    private final Peers peers;
    private final Transport transport;
    private final Link[] sendLinks;
    private final Link[] recvLinks;
    private final PowerOfTwoGroup group;
    private final PairStep step;
    private final Reducer reducer;
    private final int[] bounds;
    /** When the last run's reduce-scatter ended (System.nanoTime), -1 for a rank that folded away. */
    private long reduceScatterEndNanos = -1;

    RabenseifnerAllreduce(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.transport = peers.transport;
        this.sendLinks = peers.sendLinks;
        this.recvLinks = peers.recvLinks;
        this.reducer = reducer;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
        this.step = new PairStep(reducer, peers.staging());
        this.bounds = new int[group.p + 1];
    }

    @Override
    void run(long seq, Region region, int offset, DType dtype, int count, ReduceOp op, double prescale,
            double postscale) {
        int esize = dtype.byteSize();
        int end = offset + count * esize;
        reduceScatterEndNanos = -1;
        if (prescale != 1.0) {
            region.scale(reducer, dtype, offset, end, prescale);
        }
        if (group.folds()) {
            boolean hands = group.foldedAway();
            exchange(seq, group.foldPartner(), region, esize, hands ? offset : 0, hands ? end : 0,
                    hands ? 0 : offset, hands ? 0 : end, true, dtype, op);
        }
        if (!group.foldedAway()) {
            int p = group.p;
            int me = group.groupRank;
            for (int b = 0; b <= p; b++) {
                bounds[b] = offset + (int) Schedule.split(count, p, b) * esize;
            }
            int lo = 0;
            int hi = p;
            for (int mask = p >> 1; mask >= 1; mask >>= 1) {
                int mid = (lo + hi) >>> 1;
                int partner = group.rankOf(me ^ mask);
                if ((me & mask) == 0) {
                    exchange(seq, partner, region, esize, bounds[mid], bounds[hi], bounds[lo], bounds[mid], true,
                            dtype, op);
                    hi = mid;
                } else {
                    exchange(seq, partner, region, esize, bounds[lo], bounds[mid], bounds[mid], bounds[hi], true,
                            dtype, op);
                    lo = mid;
                }
            }
            reduceScatterEndNanos = System.nanoTime();
            double finalScale = op == ReduceOp.AVERAGE ? postscale / peers.size : postscale;
            if (finalScale != 1.0) {
                region.scale(reducer, dtype, bounds[lo], bounds[hi], finalScale); // once, by the block's owner
            }
            for (int mask = 1; mask < p; mask <<= 1) {
                int width = hi - lo;
                int partner = group.rankOf(me ^ mask);
                if ((me & mask) == 0) {
                    exchange(seq, partner, region, esize, bounds[lo], bounds[hi], bounds[hi], bounds[hi + width],
                            false, dtype, op);
                    hi += width;
                } else {
                    exchange(seq, partner, region, esize, bounds[lo], bounds[hi], bounds[lo - width], bounds[lo],
                            false, dtype, op);
                    lo -= width;
                }
            }
        }
        if (group.folds()) {
            boolean receives = group.foldedAway();
            exchange(seq, group.foldPartner(), region, esize, receives ? 0 : offset, receives ? 0 : end,
                    receives ? offset : 0, receives ? end : 0, false, dtype, op);
        }
    }

    @Override
    long reduceScatterEndNanos() {
        return reduceScatterEndNanos;
    }

    private void exchange(long seq, int partner, Region region, int esize, int sendFrom, int sendTo, int recvFrom,
            int recvTo, boolean reduce, DType dtype, ReduceOp op) {
        step.configure(region, esize, sendFrom, sendTo, recvFrom, recvTo, reduce, dtype, op);
        transport.run(step, sendLinks[partner], recvLinks[partner], seq);
    }
}
