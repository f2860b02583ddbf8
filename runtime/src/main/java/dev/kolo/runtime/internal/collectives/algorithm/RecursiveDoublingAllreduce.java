package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.OneFrameEachWay;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.PowerOfTwoGroup;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Latency path for small allreduces on larger jobs: recursive doubling, {@code log2 p} steps (plus a fold and
 * an unfold when the size is not a power of two, see {@link PowerOfTwoGroup}), each exchanging the whole vector
 * with one partner, where the direct exchange sends {@code n-1} messages and the ring takes {@code 2(n-1)} steps.
 *
 * <p>Both partners of a step combine the same two vectors, always as {@code lower op upper} (the half of the
 * group with the lower ranks first), so they hold the same bytes afterwards even for an op whose kernel is not
 * symmetric bit for bit (MIN and MAX of signed zeros or of NaNs with different payloads).
 */
public final class RecursiveDoublingAllreduce implements Algorithm {
    private final Peers peers;
    private final Reducer reducer;
    private final PowerOfTwoGroup group;
    private final ByteBuffer scratch;
    private final OneFrameEachWay exchange = new OneFrameEachWay();
    /** Largest vector this path takes: the size of its scratch buffer. */
    final int maxBytes;

    public RecursiveDoublingAllreduce(Peers peers, Reducer reducer,
            int maxBytes) {
        this.peers = peers;
        this.reducer = reducer;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
        this.maxBytes = maxBytes;
        this.scratch = ByteBuffer.allocateDirect(Math.max(8, maxBytes)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Allreduces {@code d.count} elements at byte {@code d.offset} of {@code d.view}, at most {@link #maxBytes}. */
    @Override
    public void run(OpDescription d) {
        int bytes = d.count * d.dtype.byteSize();
        d.view.clear();
        if (d.prescale != 1.0) {
            reducer.scale(d.dtype, d.view, d.offset, d.count, d.prescale);
        }
        if (group.folds()) {
            if (group.foldedAway()) {
                run(d.seq, group.foldPartner(), d.sendView, d.offset, bytes, scratch, 0, 0);
            } else {
                run(d.seq, group.foldPartner(), d.sendView, d.offset, 0, scratch, 0, bytes);
                combine(d.view, d.offset, d.dtype, d.count, d.op, bytes, true);
            }
        }
        if (!group.foldedAway()) {
            int me = group.groupRank;
            for (int mask = 1; mask < group.p; mask <<= 1) {
                run(d.seq, group.rankOf(me ^ mask), d.sendView, d.offset, bytes, scratch, 0, bytes);
                combine(d.view, d.offset, d.dtype, d.count, d.op, bytes, (me & mask) != 0);
            }
            double finalScale = d.op == ReduceOp.AVERAGE ? d.postscale / peers.size : d.postscale;
            if (finalScale != 1.0) {
                reducer.scale(d.dtype, d.view, d.offset, d.count, finalScale);
            }
        }
        if (group.folds()) {
            if (group.foldedAway()) {
                run(d.seq, group.foldPartner(), d.sendView, d.offset, 0, d.view, d.offset, bytes);
                d.view.clear();
            } else {
                run(d.seq, group.foldPartner(), d.sendView, d.offset, bytes, scratch, 0, 0);
            }
        }
    }

    /** One exchange with {@code partner}: sends {@code sendBytes} of the vector, receives {@code recvBytes} into {@code recv}. */
    private void run(long seq, int partner, ByteBuffer sendView, int offset, int sendBytes, ByteBuffer recv,
            int recvOffset, int recvBytes) {
        exchange.of(sendView, offset, sendBytes, recv, recvOffset, recvBytes);
        peers.exchange(exchange, partner, seq);
    }

    /** The vector becomes {@code lower op upper} of itself and the partner's (in scratch). */
    private void combine(ByteBuffer view, int offset, DType dtype, int count, ReduceOp op, int bytes,
            boolean partnerIsLower) {
        view.clear();
        scratch.clear();
        if (partnerIsLower) {
            reducer.reduce(dtype, op, scratch, 0, view, offset, count);
            view.put(offset, scratch, 0, bytes);
        } else {
            reducer.reduce(dtype, op, view, offset, scratch, 0, count);
        }
    }
}
