package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/** The fast path of a job of one: nothing to exchange, only the scaling a reduction would apply. */
public final class SingleRankDataPlane implements DataPlane {
    private final Reducer reducer;
    private volatile KoloException aborted;

    public SingleRankDataPlane(Reducer reducer) {
        this.reducer = reducer;
    }

    @Override
    public void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
                          double postscale) {
        checkOpen();
        scaleUnlessOne(buf, offset, count, dtype, prescale);
        scaleUnlessOne(buf, offset, count, dtype, postscale);
    }

    @Override
    public void allreduce(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
                          ReduceOp op, double prescale, double postscale) {
        for (int s = 0; s < segments; s++) {
            allreduce(views[s], 0, lengths[s] / dtype.byteSize(), dtype, op, prescale, postscale);
        }
    }

    @Override
    public void allgather(ByteBuffer buf, long[] bytesPerRank) {
        checkOpen();
    }

    @Override
    public void broadcast(ByteBuffer buf, int offset, int bytes, int root) {
        checkOpen();
    }

    @Override
    public void reducescatter(ByteBuffer buf, long[] elementsPerRank, DType dtype, ReduceOp op, double prescale,
                              double postscale) {
        allreduce(buf, 0, (int) elementsPerRank[0], dtype, op, prescale, postscale);
    }

    @Override
    public void alltoall(ByteBuffer send, long[] sendBytes, ByteBuffer recv, long[] recvBytes) {
        checkOpen();
        recv.put(0, send, 0, (int) sendBytes[0]);
    }

    @Override
    public ByteBuffer roundOutbox(int capacity) {
        throw new UnsupportedOperationException("a job of one has no agreement rounds");
    }

    @Override
    public int combineRound(int length, int maxBytes, RoundCombiner combiner) {
        throw new UnsupportedOperationException("a job of one has no agreement rounds");
    }

    @Override
    public ByteBuffer roundResult() {
        throw new UnsupportedOperationException("a job of one has no agreement rounds");
    }

    @Override
    public int roundMessagesSent() {
        return 0;
    }

    @Override
    public boolean awaitPeer(long timeoutNanos) {
        checkOpen();
        return false;
    }

    @Override
    public boolean idleWait(long timeoutNanos) {
        checkOpen();
        return false;
    }

    @Override
    public void abort(KoloException cause) {
        aborted = cause;
    }

    @Override
    public void close() {
        // nothing held
    }

    private void checkOpen() {
        if (aborted != null) {
            throw aborted;
        }
    }

    /** A factor of exactly 1 (no scaling asked) costs nothing. */
    private void scaleUnlessOne(ByteBuffer buf, int offset, int count, DType dtype, double factor) {
        if (factor != 1.0 && count > 0) {
            reducer.scale(dtype, buf, offset, count, factor);
        }
    }
}
