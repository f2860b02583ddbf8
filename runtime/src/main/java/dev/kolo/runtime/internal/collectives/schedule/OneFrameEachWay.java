package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;

/** A schedule of at most one frame each way: a whole vector out, one in, or either alone (an empty side is none). */
public final class OneFrameEachWay extends Schedule {
    private ByteBuffer send;
    private int sendOffset;
    private int sendBytes;
    private ByteBuffer recv;
    private int recvOffset;
    private int recvBytes;

    public OneFrameEachWay of(ByteBuffer send, int sendOffset, int sendBytes, ByteBuffer recv, int recvOffset,
            int recvBytes) {
        this.send = send;
        this.sendOffset = sendOffset;
        this.sendBytes = sendBytes;
        this.recv = recv;
        this.recvOffset = recvOffset;
        this.recvBytes = recvBytes;
        this.sendUnits = sendBytes > 0 ? 1 : 0;
        this.recvUnits = recvBytes > 0 ? 1 : 0;
        return this;
    }

    @Override
    protected boolean sendReady(int u, int received) {
        return true;
    }

    @Override
    protected void beginSend(int u, FrameWriter w, long generation, long seq) {
        w.begin(generation, seq, u, send, sendOffset, sendBytes);
    }

    @Override
    protected void beginRecv(int u, FrameReader r) {
        r.begin(recv, recvOffset, recvBytes);
    }
}
