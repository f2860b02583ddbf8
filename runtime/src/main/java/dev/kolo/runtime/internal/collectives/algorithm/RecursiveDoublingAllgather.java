package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.PairStep;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.PowerOfTwoGroup;


/**
 * Allgather by recursive doubling: in step k a rank swaps everything it holds with the rank {@code 2^k} group ranks
 * away, so {@code log2 p} steps where the ring takes {@code n-1}, with the ring's bytes on a power of two. Other
 * sizes fold first ({@link PowerOfTwoGroup}): an even rank below {@code 2 rem} hands its block to the next rank,
 * whose blocks then lie side by side (the mapping keeps the ranks' order, so every group's blocks are one range)
 * and gets the whole buffer back at the end, which costs a whole-buffer step: the ring stays the choice for large
 * buffers there. Blocks may have any size, zero included; everything lands in place.
 */
public final class RecursiveDoublingAllgather implements Algorithm {
    private final Peers peers;
    private final PowerOfTwoGroup group;
    private final PairStep step;
    private final int[] bounds;

    public RecursiveDoublingAllgather(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
        this.step = new PairStep(reducer, peers.staging());
        this.bounds = new int[peers.size + 1];
    }

    /** Gathers the blocks of {@code d.counts} bytes each, in rank order, concatenated in the region. */
    @Override
    public void run(OpDescription d) {
        long seq = d.seq;
        int[] byteCounts = d.counts;
        int size = peers.size;
        int rank = peers.rank;
        bounds[0] = 0;
        for (int r = 0; r < size; r++) {
            bounds[r + 1] = bounds[r] + byteCounts[r];
        }
        step.over(d.region, 1, null, null);
        if (group.folds()) {
            int partner = group.foldPartner();
            if (group.foldedAway()) {
                exchange(seq, partner, bounds[rank], bounds[rank + 1], 0, 0);
            } else {
                exchange(seq, partner, 0, 0, bounds[partner], bounds[partner + 1]);
            }
        }
        if (!group.foldedAway()) {
            int me = group.groupRank;
            int lo = me;
            int hi = me + 1;
            for (int mask = 1; mask < group.p; mask <<= 1) {
                int width = hi - lo;
                int partner = group.rankOf(me ^ mask);
                int theirLo = (me & mask) == 0 ? hi : lo - width;
                exchange(seq, partner, start(lo), end(hi), start(theirLo), end(theirLo + width));
                lo = Math.min(lo, theirLo);
                hi = lo + 2 * width;
            }
        }
        if (group.folds()) {
            int partner = group.foldPartner();
            int all = bounds[size];
            if (group.foldedAway()) {
                exchange(seq, partner, 0, 0, 0, all);
            } else {
                exchange(seq, partner, 0, all, 0, 0);
            }
        }
    }

    /** Where the blocks of group ranks {@code [g, ...)} begin. */
    private int start(int g) {
        return bounds[group.firstRankOf(g)];
    }

    /** Where the blocks of group ranks {@code [..., g)} end. */
    private int end(int g) {
        return bounds[group.endRankOf(g - 1)];
    }

    private void exchange(long seq, int partner, int sendFrom, int sendTo, int recvFrom, int recvTo) {
        step.step(sendFrom, sendTo, recvFrom, recvTo, false);
        peers.exchange(step, partner, seq);
    }
}
