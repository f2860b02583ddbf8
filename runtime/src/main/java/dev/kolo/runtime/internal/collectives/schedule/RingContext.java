package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.internal.collectives.Reducer;

import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;

/**
 * What every ring algorithm of a generation works with (Gloo's context, as the ring algorithms see it): the
 * transport, the links to the left and right neighbours, the block schedule they share (one op runs at a
 * time), the arithmetic and the chunk size.
 */
public final class RingContext {
    public final Peers peers;
    final Transport transport;
    final Link left;
    final Link right;
    public final BlockRingSchedule schedule;
    public final Reducer reducer;
    public final int chunkBytes;

    public RingContext(Peers peers, Reducer reducer, int chunkBytes) {
        this(peers, reducer, chunkBytes, peers.transport.staging);
    }

    /**
     * @param staging where chunks are received before they are reduced: the transport's, or one of the context's own
     *        when its schedule runs beside another ring's ({@link dev.kolo.runtime.internal.transport.Lane})
     */
    public RingContext(Peers peers, Reducer reducer, int chunkBytes, java.nio.ByteBuffer staging) {
        this.peers = peers;
        this.transport = peers.transport;
        this.left = peers.left;
        this.right = peers.right;
        this.reducer = reducer;
        this.chunkBytes = chunkBytes;
        this.schedule = new BlockRingSchedule(peers.size, peers.rank, reducer, staging, chunkBytes);
    }
}
