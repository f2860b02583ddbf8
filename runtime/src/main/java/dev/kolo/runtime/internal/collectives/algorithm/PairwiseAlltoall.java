package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.schedule.Peers;

import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;

/**
 * Alltoall as n-1 pairwise exchanges over direct connections: in step s rank r sends its block for
 * r+s while receiving the block from r-s, both straight between the caller's buffers and the socket.
 * Each byte crosses one connection once (relaying along the ring would copy it up to n-1 times). The
 * ring connections serve the neighbours (either direction); other pairs use links the generation's data plane
 * opens on the first alltoall of the generation.
 */
public final class PairwiseAlltoall implements Algorithm {
    private final Peers peers;
    private final StepSchedule schedule = new StepSchedule();
    private final int chunkBytes;

    public PairwiseAlltoall(Peers peers, int chunkBytes) {
        this.peers = peers;
        this.chunkBytes = chunkBytes;
    }

    /** Sends block j of {@code d.sendView} to rank j and receives rank j's into block j of {@code d.recvView}. */
    @Override
    public void run(OpDescription d) {
        ByteBuffer sendView = d.sendView;
        ByteBuffer recvView = d.recvView;
        int[] sendBounds = d.sendBounds;
        int[] recvBounds = d.recvBounds;
        int size = peers.size;
        int rank = peers.rank;
        Link[] sendLinks = peers.sendLinks;
        Link[] recvLinks = peers.recvLinks;
        // Own block: a local copy.
        int own = sendBounds[rank + 1] - sendBounds[rank];
        sendView.limit(sendBounds[rank] + own).position(sendBounds[rank]);
        recvView.limit(recvBounds[rank] + own).position(recvBounds[rank]);
        recvView.put(sendView);
        for (int s = 1; s < size; s++) {
            int to = (rank + s) % size;
            int from = (rank - s + size) % size;
            schedule.configure(sendView, sendBounds[to], sendBounds[to + 1] - sendBounds[to],
                    recvView, recvBounds[from], recvBounds[from + 1] - recvBounds[from], chunkBytes);
            peers.transport.run(schedule, sendLinks[to], recvLinks[from], d.seq);
        }
    }

    /** One exchange: chunked send of one block, chunked receive of another, independent of each other. */
    private static final class StepSchedule extends Schedule {
        private ByteBuffer sendView;
        private int sendOffset;
        private int sendBytes;
        private ByteBuffer recvView;
        private int recvOffset;
        private int recvBytes;

        void configure(ByteBuffer sendView, int sendOffset, int sendBytes, ByteBuffer recvView, int recvOffset,
                int recvBytes, int chunkBytes) {
            this.sendView = sendView;
            this.sendOffset = sendOffset;
            this.sendBytes = sendBytes;
            this.recvView = recvView;
            this.recvOffset = recvOffset;
            this.recvBytes = recvBytes;
            this.sendUnits = chunksOf(sendBytes, chunkBytes);
            this.recvUnits = chunksOf(recvBytes, chunkBytes);
        }

        private static int chunksOf(int bytes, int chunkBytes) {
            return (int) ((bytes + (long) chunkBytes - 1) / chunkBytes);
        }

        @Override
        protected boolean sendReady(int u, int received) {
            return true;
        }

        @Override
        protected void beginSend(int u, FrameWriter w, long generation, long seq) {
            int off = (int) split(sendBytes, sendUnits, u);
            w.begin(generation, seq, u, sendView, sendOffset + off, (int) split(sendBytes, sendUnits, u + 1) - off);
        }

        @Override
        protected void beginRecv(int u, FrameReader r) {
            int off = (int) split(recvBytes, recvUnits, u);
            r.begin(recvView, recvOffset + off, (int) split(recvBytes, recvUnits, u + 1) - off);
        }
    }
}
