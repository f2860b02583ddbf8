package dev.kolo.runtime.internal.dataplane;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.ring.Ring;
import java.nio.ByteBuffer;

/**
 * The data plane of a generation of two or more ranks: the ring's collectives, numbered by a sequence that
 * advances identically on every rank because every rank runs the same responses in the same order.
 */
final class RingDataPlane implements DataPlane {
    private final Ring ring;
    private final int size;
    private final int[] countsA;
    private final int[] countsB;
    private long sequence;

    RingDataPlane(Ring ring) {
        this.ring = ring;
        this.size = ring.size();
        this.countsA = new int[size];
        this.countsB = new int[size];
    }

    @Override
    public void allreduce(ByteBuffer buf, int offset, int count, DType dtype, ReduceOp op, double prescale,
                          double postscale) {
        ring.allreduce(sequence++, buf, offset, count, dtype, op, prescale, postscale);
    }

    @Override
    public void allreduce(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
                          ReduceOp op, double prescale, double postscale) {
        ring.allreduce(sequence++, sendViews, views, lengths, segments, dtype, op, prescale, postscale);
    }

    @Override
    public long lastReduceScatterEndNanos() {
        return ring.lastReduceScatterEndNanos();
    }

    @Override
    public void allgather(ByteBuffer buf, long[] bytesPerRank) {
        ring.allgather(sequence++, buf, toInts(bytesPerRank, countsA));
    }

    @Override
    public void broadcast(ByteBuffer buf, int offset, int bytes, int root) {
        ring.broadcast(sequence++, buf, offset, bytes, root);
    }

    @Override
    public void reducescatter(ByteBuffer buf, long[] elementsPerRank, DType dtype, ReduceOp op, double prescale,
                              double postscale) {
        ring.reducescatter(sequence++, buf, dtype, toInts(elementsPerRank, countsA), op, prescale, postscale);
    }

    @Override
    public void alltoall(ByteBuffer send, long[] sendBytes, ByteBuffer recv, long[] recvBytes) {
        ring.alltoall(sequence++, send, toInts(sendBytes, countsA), recv, toInts(recvBytes, countsB));
    }

    @Override
    public ByteBuffer roundOutbox(int capacity) {
        return ring.exchangeOutbox(capacity);
    }

    @Override
    public void exchangeRound(int length, int maxBytes) {
        ring.exchange(sequence++, length, maxBytes);
    }

    @Override
    public ByteBuffer roundInbox() {
        return ring.exchangeInbox();
    }

    @Override
    public int roundOffset(int peer) {
        return ring.exchangeOffset(peer);
    }

    @Override
    public int roundLength(int peer) {
        return ring.exchangeLength(peer);
    }

    @Override
    public boolean awaitPeer(long timeoutNanos) {
        return ring.awaitIncoming(timeoutNanos);
    }

    @Override
    public void wakeup() {
        ring.wakeup();
    }

    @Override
    public boolean idleWait(long timeoutNanos) {
        return ring.idleWait(timeoutNanos);
    }

    @Override
    public void idleWakeup() {
        ring.idleWakeup();
    }

    @Override
    public void polling(long spinNanos, boolean yield) {
        ring.polling(spinNanos, yield);
    }

    @Override
    public void abort(KoloException cause) {
        ring.abort(cause);
    }

    @Override
    public void close() {
        ring.close();
    }

    private static int[] toInts(long[] values, int[] into) {
        for (int i = 0; i < values.length; i++) {
            into[i] = Math.toIntExact(values[i]);
        }
        return into;
    }
}
