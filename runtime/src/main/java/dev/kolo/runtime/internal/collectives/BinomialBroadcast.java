package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;
import java.nio.ByteBuffer;

/**
 * Broadcast along a binomial tree rooted at the root: in step k the ranks that hold the buffer (the first
 * {@code 2^k}, counted from the root) each send it to the rank {@code 2^k} further on, so {@code ceil(log2 n)}
 * steps where the chain takes {@code n-1}. Each step moves the whole buffer, so the pipelined chain (one buffer
 * plus n-2 chunks) wins for large buffers.
 */
final class BinomialBroadcast {
    private final Peers peers;
    private final Transport transport;
    private final Link[] sendLinks;
    private final Link[] recvLinks;
    private final PairStep step;
    private final ContiguousRegion contiguous = new ContiguousRegion();

    BinomialBroadcast(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.transport = peers.transport;
        this.sendLinks = peers.sendLinks;
        this.recvLinks = peers.recvLinks;
        this.step = new PairStep(reducer, peers.staging());
    }

    void run(long seq, ByteBuffer sendView, ByteBuffer view, int offset, int bytes, int root) {
        int size = peers.size;
        int me = Math.floorMod(peers.rank - root, size); // counted from the root
        Region region = contiguous.of(sendView, view);
        try {
            for (int mask = 1; mask < size; mask <<= 1) {
                if (me < mask && me + mask < size) {
                    int to = (me + mask + root) % size;
                    step.configure(region, 1, offset, offset + bytes, 0, 0, false, null, null);
                    transport.run(step, sendLinks[to], recvLinks[to], seq);
                } else if (me >= mask && me < 2 * mask) {
                    int from = (me - mask + root) % size;
                    step.configure(region, 1, 0, 0, offset, offset + bytes, false, null, null);
                    transport.run(step, sendLinks[from], recvLinks[from], seq);
                }
            }
        } finally {
            contiguous.clear();
        }
    }
}
