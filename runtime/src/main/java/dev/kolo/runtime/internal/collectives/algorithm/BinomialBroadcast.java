package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.PairStep;
import dev.kolo.runtime.internal.collectives.schedule.Peers;


/**
 * Broadcast along a binomial tree rooted at the root: in step k the ranks that hold the buffer (the first
 * {@code 2^k}, counted from the root) each send it to the rank {@code 2^k} further on, so {@code ceil(log2 n)}
 * steps where the chain takes {@code n-1}. Each step moves the whole buffer, so the pipelined chain (one buffer
 * plus n-2 chunks) wins for large buffers.
 */
public final class BinomialBroadcast implements Algorithm {
    private final Peers peers;
    private final PairStep step;

    public BinomialBroadcast(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.step = new PairStep(reducer, peers.staging());
    }

    /** Copies {@code d.bytes} at {@code d.offset} of rank {@code d.root}'s region into every other rank's. */
    @Override
    public void run(OpDescription d) {
        int size = peers.size;
        int root = d.root;
        int offset = d.offset;
        int bytes = d.bytes;
        int me = Math.floorMod(peers.rank - root, size); // counted from the root
        step.over(d.region, 1, null, null);
        for (int mask = 1; mask < size; mask <<= 1) {
            if (me < mask && me + mask < size) {
                int to = (me + mask + root) % size;
                step.step(offset, offset + bytes, 0, 0, false);
                peers.exchange(step, to, d.seq);
            } else if (me >= mask && me < 2 * mask) {
                int from = (me - mask + root) % size;
                step.step(0, 0, offset, offset + bytes, false);
                peers.exchange(step, from, d.seq);
            }
        }
    }
}
