package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.OneFrameEachWay;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.transport.Link;
import java.nio.ByteBuffer;

/**
 * Latency path for small allreduces: every rank sends its whole (prescaled) vector straight to every
 * peer, then reduces the n vectors in rank order 0..n-1. One network hop instead of the ring's 2(n-1);
 * each rank reduces the same inputs in the same order, so results are byte-identical. Only for
 * payloads far below the socket buffers ({@link #MAX_BYTES}), so posting all sends before receiving
 * cannot block.
 */
public final class DirectAllreduce implements Algorithm {
    /** Largest payload taking this path. */
    static final int MAX_BYTES = AllreduceAlgorithms.DIRECT_MAX_BYTES;

    /** Scratch per rank: at least 8 bytes, so the barrier's one-byte op always fits. */
    private static final int SLOT = Math.max(8, MAX_BYTES);

    private final Peers peers;
    private final Reducer reducer;
    private final ByteBuffer gathered; // block j holds rank j's vector
    private final OneFrameEachWay frame = new OneFrameEachWay();

    public DirectAllreduce(Peers peers, Reducer reducer) {
        this.peers = peers;
        this.reducer = reducer;
        this.gathered = ByteBuffer.allocateDirect(SLOT * peers.size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    /** Allreduces {@code d.count} elements at byte {@code d.offset} of {@code d.view} (at most {@link #MAX_BYTES}). */
    @Override
    public void run(OpDescription d) {
        int size = peers.size;
        int rank = peers.rank;
        Link[] sendLinks = peers.sendLinks;
        Link[] recvLinks = peers.recvLinks;
        int bytes = d.count * d.dtype.byteSize();
        if (d.prescale != 1.0) {
            d.view.clear();
            reducer.scale(d.dtype, d.view, d.offset, d.count, d.prescale);
        }
        for (int s = 1; s < size; s++) {
            int to = (rank + s) % size;
            peers.transport.run(frame.of(d.sendView, d.offset, bytes, null, 0, 0), sendLinks[to], null, d.seq);
        }
        for (int s = 1; s < size; s++) {
            int from = (rank - s + size) % size;
            peers.transport.run(frame.of(null, 0, 0, gathered, from * SLOT, bytes), null, recvLinks[from], d.seq);
        }
        // Own vector into its slot, then view = v0 op v1 op ... in rank order.
        gathered.clear();
        d.view.limit(d.offset + bytes).position(d.offset);
        gathered.position(rank * SLOT);
        gathered.put(d.view);
        gathered.limit(bytes).position(0);
        d.view.limit(d.offset + bytes).position(d.offset);
        d.view.put(gathered);
        d.view.clear();
        gathered.clear();
        for (int j = 1; j < size; j++) {
            reducer.reduce(d.dtype, d.op, d.view, d.offset, gathered, j * SLOT, d.count);
        }
        double finalScale = d.op == ReduceOp.AVERAGE ? d.postscale / size : d.postscale;
        if (finalScale != 1.0) {
            reducer.scale(d.dtype, d.view, d.offset, d.count, finalScale);
        }
    }
}
