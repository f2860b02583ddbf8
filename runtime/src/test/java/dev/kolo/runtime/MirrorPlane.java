package dev.kolo.runtime;

import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.RoundCombiner;
import dev.kolo.runtime.internal.engine.agree.RoundMessage;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A data plane of two ranks whose peer always sends the round message this rank sends (it has submitted
 * the same and holds the same responses), and whose allreduce either blocks until told how to fail or
 * leaves the data as it is.
 */
final class MirrorPlane implements DataPlane {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch failed = new CountDownLatch(1);
    private final CompletableFuture<KoloException> failure = new CompletableFuture<>();
    private final boolean blocks;
    private final ByteBuffer outbox = ByteBuffer.allocateDirect(1 << 20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer peer = ByteBuffer.allocateDirect(1 << 20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer result = ByteBuffer.allocateDirect(1 << 20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    /** When set, the peer reports holding no coordinator response (one was lost on its way to it). */
    volatile boolean peerLacksResponses;

    MirrorPlane(boolean blocks) {
        this.blocks = blocks;
    }

    void failWith(KoloException e) {
        failure.complete(e);
    }

    @Override
    public void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
                          double postscale) {
        entered.countDown();
        if (!blocks) {
            return;
        }
        KoloException e;
        try {
            e = failure.get(30, TimeUnit.SECONDS);
        } catch (Exception interrupted) {
            e = new KoloException("test data plane: " + interrupted);
        }
        failed.countDown();
        throw e;
    }

    @Override
    public void allreduce(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
                          ReduceOp op, double prescale, double postscale) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void allgather(ByteBuffer buf, long[] bytesPerRank) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void broadcast(ByteBuffer buf, int offset, int bytes, int root) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void reducescatter(ByteBuffer buf, long[] elementsPerRank, DType dtype, ReduceOp op, double prescale,
                              double postscale) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void alltoall(ByteBuffer send, long[] sendBytes, ByteBuffer recv, long[] recvBytes) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ByteBuffer roundOutbox(int capacity) {
        return outbox;
    }

    /** This rank is rank 0; its peer, rank 1, sent the same message (holding no response when told so). */
    @Override
    public int combineRound(int length, int maxBytes, RoundCombiner combiner) {
        peer.put(0, outbox, 0, length);
        peer.putLong(RoundMessage.HOLDERS, 1L << 1);
        if (peerLacksResponses) {
            peer.putLong(RoundMessage.RECEIVED, 0);
        }
        return combiner.combine(outbox, length, 0, peer, length, 1, result);
    }

    @Override
    public ByteBuffer roundResult() {
        return result;
    }

    @Override
    public int roundMessagesSent() {
        return 1;
    }

    @Override
    public boolean awaitPeer(long timeoutNanos) {
        java.util.concurrent.locks.LockSupport.parkNanos(Math.min(timeoutNanos, 1_000_000));
        return false;
    }

    @Override
    public boolean idleWait(long timeoutNanos) {
        java.util.concurrent.locks.LockSupport.parkNanos(Math.min(timeoutNanos, 1_000_000));
        return false;
    }

    @Override
    public void abort(KoloException cause) {
        // a real ring wakes its op; this one fails only when the test says so
    }

    @Override
    public void close() {
        failure.complete(new KoloException("closed"));
    }
}
