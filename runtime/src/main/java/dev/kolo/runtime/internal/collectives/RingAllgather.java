package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;
import java.nio.ByteBuffer;

/**
 * Ring allgather of per-rank byte blocks of any sizes (zero included): n-1 pipelined steps, each
 * forwarding the block received in the previous step, straight from and into the caller's buffer.
 */
final class RingAllgather {
    private final Transport transport;
    private final Link left;
    private final Link right;
    private final BlockRingSchedule schedule;
    private final int chunkBytes;
    private final ContiguousRegion contiguous = new ContiguousRegion();

    RingAllgather(Transport transport, Link left, Link right, BlockRingSchedule schedule, int chunkBytes) {
        this.transport = transport;
        this.left = left;
        this.right = right;
        this.schedule = schedule;
        this.chunkBytes = chunkBytes;
    }

    /** @param byteCounts bytes of each rank's block, in rank order; blocks are concatenated in the buffer */
    void run(long seq, ByteBuffer sendView, ByteBuffer view, int[] byteCounts) {
        int size = transport.size;
        int[] bounds = schedule.bounds;
        bounds[0] = 0;
        for (int b = 0; b < size; b++) {
            bounds[b + 1] = bounds[b] + byteCounts[b];
        }
        schedule.configure(contiguous.of(sendView, view), 0, false, true, null, 1, null, 1.0, chunkBytes);
        try {
            transport.run(schedule, right, left, seq);
        } finally {
            contiguous.clear();
        }
    }
}
