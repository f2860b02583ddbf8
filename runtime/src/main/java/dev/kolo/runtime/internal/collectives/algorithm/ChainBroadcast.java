package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.schedule.Peers;

import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;

/**
 * Broadcast as a pipelined chain along the ring from the root: each rank receives chunk c from its left
 * neighbour and forwards it to the right while chunk c+1 arrives, so the time is about one buffer transfer
 * plus (n-2) chunk latencies. The last rank before the root only receives.
 */
public final class ChainBroadcast implements Algorithm {
    private final Peers peers;
    private final ChainSchedule schedule = new ChainSchedule();
    private final int chunkBytes;

    public ChainBroadcast(Peers peers, int chunkBytes) {
        this.peers = peers;
        this.chunkBytes = chunkBytes;
    }

    /** Copies {@code d.bytes} at {@code d.offset} of rank {@code d.root}'s buffer into every other rank's. */
    @Override
    public void run(OpDescription d) {
        int bytes = d.bytes;
        int root = d.root;
        int size = peers.size;
        int rank = peers.rank;
        boolean isRoot = rank == root;
        boolean forwards = (rank + 1) % size != root;
        int chunks = bytes == 0 ? 0 : (int) ((bytes + (long) chunkBytes - 1) / chunkBytes);
        schedule.configure(d.sendView, d.view, d.offset, bytes, chunks, isRoot, forwards ? chunks : 0,
                isRoot ? 0 : chunks);
        peers.transport.run(schedule, forwards ? peers.right : null, isRoot ? null : peers.left, d.seq);
    }

    private static final class ChainSchedule extends Schedule {
        private ByteBuffer sendView;
        private ByteBuffer view;
        private int base;
        private int bytes;
        private int chunks;
        private boolean root;

        void configure(ByteBuffer sendView, ByteBuffer view, int base, int bytes, int chunks, boolean root, int sends,
                int recvs) {
            this.sendView = sendView;
            this.view = view;
            this.base = base;
            this.bytes = bytes;
            this.chunks = chunks;
            this.root = root;
            this.sendUnits = sends;
            this.recvUnits = recvs;
        }

        @Override
        protected boolean sendReady(int u, int received) {
            return root || received > u;
        }

        @Override
        protected void beginSend(int u, FrameWriter w, long generation, long seq) {
            int off = offset(u);
            w.begin(generation, seq, u, sendView, off, offset(u + 1) - off);
        }

        @Override
        protected void beginRecv(int u, FrameReader r) {
            int off = offset(u);
            r.begin(view, off, offset(u + 1) - off);
        }

        private int offset(int c) {
            return base + (int) split(bytes, chunks, c);
        }
    }
}
