package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.schedule.RingContext;


/**
 * Ring allgather of per-rank byte blocks of any sizes (zero included): n-1 pipelined steps, each
 * forwarding the block received in the previous step, straight from and into the caller's buffer.
 */
public final class RingAllgather implements Algorithm {
    private final RingContext ring;

    public RingAllgather(RingContext ring) {
        this.ring = ring;
    }

    /** Gathers the blocks of {@code d.counts} bytes each, in rank order, concatenated in the region. */
    @Override
    public void run(OpDescription d) {
        int size = ring.peers.size;
        int[] bounds = ring.schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + d.counts[b];
        }
        ring.schedule.configure(d.region, 0, false, true, null, null, 1.0);
        ring.peers.aroundRing(ring.schedule, d.seq);
    }
}
