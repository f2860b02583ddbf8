package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;

/**
 * One step of a log-step algorithm with one partner: this rank sends the region's bytes {@code [sendFrom,
 * sendTo)} while it receives the partner's {@code [recvFrom, recvTo)}, both cut into chunks of at most the
 * staging buffer; each received chunk is either reduced into the region (a reduce-scatter step: it arrives in
 * the staging buffer) or lands in place (an allgather step). Either range may be empty (a fold sends only, an
 * unfold receives only). Both partners derive the same ranges from the agreed op, so no sizes travel.
 */
public final class PairStep extends Schedule {
    private final Reducer reducer;
    private final ByteBuffer staging;
    private FrameReader reader;
    private Region region;
    private int chunk;
    private int sendFrom;
    private int sendTo;
    private int recvFrom;
    private int recvTo;
    private boolean reduce;
    private DType dtype;
    private ReduceOp op;

    public PairStep(Reducer reducer, ByteBuffer staging) {
        this.reducer = reducer;
        this.staging = staging;
    }

    /**
     * The op's bytes, for every step of it.
     *
     * @param elementSize bytes per element: chunks are cut on element bounds
     * @param dtype how received bytes are reduced ({@code op}) in a step that reduces; null for an op that never does
     */
    public PairStep over(Region region, int elementSize, DType dtype, ReduceOp op) {
        this.region = region;
        this.chunk = Math.max(elementSize, staging.capacity() / elementSize * elementSize);
        this.dtype = dtype;
        this.op = op;
        return this;
    }

    /**
     * One step: the region's bytes {@code [sendFrom, sendTo)} out, the partner's {@code [recvFrom, recvTo)} in.
     *
     * @param reduce whether received bytes are reduced into the region or land in place
     */
    public PairStep step(int sendFrom, int sendTo, int recvFrom, int recvTo, boolean reduce) {
        this.sendFrom = sendFrom;
        this.sendTo = sendTo;
        this.recvFrom = recvFrom;
        this.recvTo = recvTo;
        this.reduce = reduce;
        this.sendUnits = units(sendTo - sendFrom);
        this.recvUnits = units(recvTo - recvFrom);
        return this;
    }

    private int units(int bytes) {
        return bytes <= 0 ? 0 : (int) ((bytes + (long) chunk - 1) / chunk);
    }

    @Override
    protected boolean sendReady(int u, int received) {
        return true;
    }

    @Override
    protected void beginSend(int u, FrameWriter w, long generation, long seq) {
        int from = sendFrom + u * chunk;
        region.send(w, generation, seq, u, from, Math.min(sendTo, from + chunk));
    }

    @Override
    protected void beginRecv(int u, FrameReader r) {
        int from = recvFrom + u * chunk;
        int to = Math.min(recvTo, from + chunk);
        if (reduce) {
            r.beginInPlace(staging, to - from);
            reader = r;
        } else {
            region.receive(r, from, to);
        }
    }

    @Override
    protected void received(int u) {
        if (reduce) {
            int from = recvFrom + u * chunk;
            ReceivedChunk.reduceInto(region, reducer, dtype, op, from, Math.min(recvTo, from + chunk), reader);
        }
    }
}
