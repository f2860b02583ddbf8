package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Schedule;
import dev.kolo.runtime.internal.transport.Transport;
import java.nio.ByteBuffer;

/**
 * Latency path for small allreduces: every rank sends its whole (prescaled) vector straight to every
 * peer, then reduces the n vectors in rank order 0..n-1. One network hop instead of the ring's 2(n-1);
 * each rank reduces the same inputs in the same order, so results are byte-identical. Only for
 * payloads far below the socket buffers ({@link #MAX_BYTES}), so posting all sends before receiving
 * cannot block.
 */
final class DirectAllreduce {
    /** Largest payload taking this path. */
    static final int MAX_BYTES = 8 * 1024;

    /** Scratch per rank: at least 8 bytes, so the barrier's one-byte op always fits. */
    private static final int SLOT = Math.max(8, MAX_BYTES);

    private final Transport transport;
    private final Reducer reducer;
    private final ByteBuffer gathered; // block j holds rank j's vector
    private final OneFrame frame = new OneFrame();

    DirectAllreduce(Transport transport, Reducer reducer) {
        this.transport = transport;
        this.reducer = reducer;
        this.gathered = ByteBuffer.allocateDirect(SLOT * transport.size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    void run(long seq, ByteBuffer sendView, ByteBuffer view, int offset, DType dtype, int count, ReduceOp op,
            double prescale, double postscale, Link[] sendLinks, Link[] recvLinks) {
        int size = transport.size;
        int rank = transport.rank;
        int bytes = count * dtype.byteSize();
        if (prescale != 1.0) {
            view.clear();
            reducer.scale(dtype, view, offset, count, prescale);
        }
        for (int s = 1; s < size; s++) {
            int to = (rank + s) % size;
            frame.send(sendView, offset, bytes);
            transport.run(frame, sendLinks[to], null, seq);
        }
        for (int s = 1; s < size; s++) {
            int from = (rank - s + size) % size;
            frame.receive(gathered, from * SLOT, bytes);
            transport.run(frame, null, recvLinks[from], seq);
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

    /** A schedule of a single frame, sent or received. */
    private static final class OneFrame extends Schedule {
        private ByteBuffer buffer;
        private int offset;
        private int length;

        void send(ByteBuffer b, int off, int len) {
            unit(b, off, len, 1, 0);
        }

        void receive(ByteBuffer b, int off, int len) {
            unit(b, off, len, 0, 1);
        }

        private void unit(ByteBuffer b, int off, int len, int sends, int receives) {
            buffer = b;
            offset = off;
            length = len;
            sendUnits = sends;
            recvUnits = receives;
        }

        @Override
        protected boolean sendReady(int u, int received) {
            return true;
        }

        @Override
        protected void beginSend(int u, FrameWriter w, long generation, long seq) {
            w.begin(generation, seq, u, buffer, offset, length);
        }

        @Override
        protected void beginRecv(int u, FrameReader r) {
            r.begin(buffer, offset, length);
        }
    }
}
