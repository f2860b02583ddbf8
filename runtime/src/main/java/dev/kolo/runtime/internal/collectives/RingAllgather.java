package dev.kolo.runtime.internal.collectives;

import java.nio.ByteBuffer;

/**
 * Ring allgather of per-rank byte blocks of any sizes (zero included): n-1 pipelined steps, each
 * forwarding the block received in the previous step, straight from and into the caller's buffer.
 */
final class RingAllgather {
    private final RingContext ring;
    private final ContiguousRegion contiguous = new ContiguousRegion();

    RingAllgather(RingContext ring) {
        this.ring = ring;
    }

    /** @param byteCounts bytes of each rank's block, in rank order; blocks are concatenated in the buffer */
    void run(long seq, ByteBuffer sendView, ByteBuffer view, int[] byteCounts) {
        int size = ring.peers.size;
        int[] bounds = ring.schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + byteCounts[b];
        }
        ring.schedule.configure(contiguous.of(sendView, view), 0, false, true, null, 1, null, 1.0, ring.chunkBytes);
        try {
            ring.transport.run(ring.schedule, ring.right, ring.left, seq);
        } finally {
            contiguous.clear();
        }
    }
}
