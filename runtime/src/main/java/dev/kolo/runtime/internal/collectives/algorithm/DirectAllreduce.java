package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.DType;
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
        long seq = d.seq;
        ByteBuffer sendView = d.sendView;
        ByteBuffer view = d.view;
        int offset = d.offset;
        DType dtype = d.dtype;
        int count = d.count;
        ReduceOp op = d.op;
        double prescale = d.prescale;
        double postscale = d.postscale;
        int size = peers.size;
        int rank = peers.rank;
        Link[] sendLinks = peers.sendLinks;
        Link[] recvLinks = peers.recvLinks;
        int bytes = count * dtype.byteSize();
        if (prescale != 1.0) {
            view.clear();
            reducer.scale(dtype, view, offset, count, prescale);
        }
        for (int s = 1; s < size; s++) {
            int to = (rank + s) % size;
            peers.transport.run(frame.of(sendView, offset, bytes, null, 0, 0), sendLinks[to], null, seq);
        }
        for (int s = 1; s < size; s++) {
            int from = (rank - s + size) % size;
            peers.transport.run(frame.of(null, 0, 0, gathered, from * SLOT, bytes), null, recvLinks[from], seq);
        }
        // Own vector into its slot, then view = v0 op v1 op ... in rank order.
        gathered.clear();
        view.limit(offset + bytes).position(offset);
        gathered.position(rank * SLOT);
        gathered.put(view);
        gathered.limit(bytes).position(0);
        view.limit(offset + bytes).position(offset);
        view.put(gathered);
        view.clear();
        gathered.clear();
        for (int j = 1; j < size; j++) {
            reducer.reduce(dtype, op, view, offset, gathered, j * SLOT, count);
        }
        double finalScale = op == ReduceOp.AVERAGE ? postscale / size : postscale;
        if (finalScale != 1.0) {
            reducer.scale(dtype, view, offset, count, finalScale);
        }
    }
}
