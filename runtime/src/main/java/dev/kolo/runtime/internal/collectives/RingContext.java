package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;

/**
 * What every ring algorithm of a generation works with (Gloo's context, as the ring algorithms see it): the
 * transport, the links to the left and right neighbours, the block schedule they share (one op runs at a
 * time), the arithmetic and the chunk size.
 */
final class RingContext {
    final Transport transport;
    final Link left;
    final Link right;
    final BlockRingSchedule schedule;
    final Reducer reducer;
    final int chunkBytes;

    RingContext(Transport transport, Link left, Link right, Reducer reducer, int chunkBytes) {
        this.transport = transport;
        this.left = left;
        this.right = right;
        this.reducer = reducer;
        this.chunkBytes = chunkBytes;
        this.schedule = new BlockRingSchedule(transport.size, transport.rank, reducer, transport.staging);
    }
}
