package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.kernels.HalfFloats;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.internal.collectives.schedule.OneFrameEachWay;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.PowerOfTwoGroup;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Adasum (Maleki et al., "Scaling Distributed Training with Adaptive Summation", MLSys 2021): two gradients
 * {@code a} and {@code b} combine into {@code (1 - a.b / 2|a|^2) a + (1 - a.b / 2|b|^2) b}, which is their sum
 * when they are orthogonal and their mean when they are equal; {@code n} gradients combine as a binary tree of
 * such pairs. Run by recursive vector halving with distance doubling: at step {@code k} each group rank pairs
 * with the one {@code 2^k} away, keeps half of what it holds and takes the partner's matching half, the
 * {@code 2^(k+1)} ranks that hold the two vectors being combined add up their partial dot products (a small
 * recursive-doubling exchange, the same sums in the same order everywhere, so every rank gets the same
 * coefficients), and each combines its half; then an allgather by recursive halving puts the result together.
 * Other sizes fold first ({@link PowerOfTwoGroup}): an odd rank combines its even neighbour's vector with its
 * own, then takes part. The tree is therefore: pairs {@code (0,1), (2,3), ...} of the fold, then group ranks at
 * distance 1, 2, 4, ... Any floating-point type; products and coefficients in double precision, each
 * combined element rounded once to the type.
 */
public final class AdasumAllreduce implements Algorithm {
    /** The fraction of a combined vector an all-zero side keeps: any value would do, as the side is zero. */
    private static final double ZERO_NORM_COEFFICIENT = 1.0;

    private final Peers peers;
    private final PowerOfTwoGroup group;
    private final OneFrameEachWay exchange = new OneFrameEachWay();
    /** Per step: the element range this rank held before the step halved it. */
    private final int[] stepLo;
    private final int[] stepHi;
    /** The partner's half of the step's vectors; grown to the largest op seen, then kept. */
    private ByteBuffer partnerHalf = ByteBuffer.allocateDirect(0);
    /** a.b, a.a, b.b of this rank's part, then of the block; the partner's, as received. */
    private final ByteBuffer dots = ByteBuffer.allocateDirect(3 * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer partnerDots = ByteBuffer.allocateDirect(3 * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final double[] sums = new double[3];
    /** This rank's vector and the partner's part, as numbers. */
    private final Vector own = new Vector();
    private final Vector other = new Vector();

    public AdasumAllreduce(Peers peers) {
        this.peers = peers;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
        this.stepLo = new int[group.steps()];
        this.stepHi = new int[group.steps()];
    }

    /**
     * Adasum of every rank's {@code d.count} elements at byte {@code d.offset} of the buffer, in place: {@code d.view}
     * is read and written with absolute indexes, {@code d.sendView} (another view of the same buffer) is what frames
     * are sent from.
     */
    @Override
    public void run(OpDescription d) {
        d.view.clear(); // a private view: an earlier op's receive may have left its limit short
        Vector v = own.of(d.view, d.offset, d.dtype);
        if (d.prescale != 1.0) {
            v.scale(0, d.count, d.prescale);
        }
        int esize = d.dtype.byteSize();
        if (group.folds()) {
            if (group.foldedAway()) {
                send(d.seq, group.foldPartner(), d.sendView, d.offset, d.count * esize);
            } else {
                Vector b = receive(d.seq, group.foldPartner(), d.count, d.dtype);
                // The even rank's vector is the tree's left side (a): it comes first in rank order.
                combine(v, 0, d.count, b, 0, true, localDots(b, 0, v, 0, d.count));
            }
        }
        if (!group.foldedAway()) {
            int me = group.groupRank;
            int lo = 0;
            int hi = d.count;
            for (int k = 0; k < group.steps(); k++) {
                int mask = 1 << k;
                int partner = group.rankOf(me ^ mask);
                int mid = lo + (hi - lo) / 2;
                stepLo[k] = lo;
                stepHi[k] = hi;
                boolean lower = (me & mask) == 0;
                int keepLo = lower ? lo : mid;
                int keepHi = lower ? mid : hi;
                int giveLo = lower ? mid : lo;
                int giveHi = lower ? hi : mid;
                Vector b = exchangeHalves(d.seq, partner, d.sendView, d.offset, esize, giveLo, giveHi, keepHi - keepLo,
                        d.dtype);
                // a is the lower side's vector, b the upper side's, on both partners.
                double[] partial = lower ? localDots(v, keepLo, b, 0, keepHi - keepLo)
                        : localDots(b, 0, v, keepLo, keepHi - keepLo);
                sumOverBlock(d.seq, me, mask, partial);
                combine(v, keepLo, keepHi - keepLo, b, 0, !lower, partial);
                lo = keepLo;
                hi = keepHi;
            }
            if (d.postscale != 1.0) {
                v.scale(lo, hi, d.postscale);
            }
            for (int k = group.steps() - 1; k >= 0; k--) {
                int partner = group.rankOf(me ^ (1 << k));
                int fromLo = stepLo[k];
                int fromHi = stepHi[k];
                boolean keptLower = (me & (1 << k)) == 0;
                int otherLo = keptLower ? hi : fromLo;
                int otherHi = keptLower ? fromHi : lo;
                exchange(d.seq, partner, d.sendView, d.offset + lo * esize, (hi - lo) * esize, d.view,
                        d.offset + otherLo * esize, (otherHi - otherLo) * esize);
                lo = fromLo;
                hi = fromHi;
            }
        }
        if (group.folds()) {
            if (group.foldedAway()) {
                exchange(d.seq, group.foldPartner(), null, 0, 0, d.view, d.offset, d.count * esize);
            } else {
                send(d.seq, group.foldPartner(), d.sendView, d.offset, d.count * esize);
            }
        }
    }

    /** Sends this rank's {@code [giveLo, giveHi)} and receives the partner's half into {@link #partnerHalf}. */
    private Vector exchangeHalves(long seq, int partner, ByteBuffer sendView, int offset, int esize, int giveLo,
            int giveHi, int keep, DType dtype) {
        ByteBuffer into = partnerHalf(keep * esize);
        exchange(seq, partner, sendView, offset + giveLo * esize, (giveHi - giveLo) * esize, into, 0, keep * esize);
        return other.of(into, 0, dtype);
    }

    private Vector receive(long seq, int partner, int count, DType dtype) {
        ByteBuffer into = partnerHalf(count * dtype.byteSize());
        exchange(seq, partner, null, 0, 0, into, 0, count * dtype.byteSize());
        return other.of(into, 0, dtype);
    }

    private void send(long seq, int partner, ByteBuffer view, int offset, int bytes) {
        exchange(seq, partner, view, offset, bytes, null, 0, 0);
    }

    private void exchange(long seq, int partner, ByteBuffer send, int sendOffset, int sendBytes, ByteBuffer recv,
            int recvOffset, int recvBytes) {
        exchange.of(send, sendOffset, sendBytes, recv, recvOffset, recvBytes);
        peers.exchange(exchange, partner, seq);
    }

    private ByteBuffer partnerHalf(int bytes) {
        if (partnerHalf.capacity() < bytes) {
            partnerHalf = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        return partnerHalf;
    }

    /**
     * Adds {@code partial} (a.b, a.a, b.b of this rank's part) over the {@code 2 mask} group ranks that hold the
     * step's vectors, by recursive doubling among them; on return it holds the sums, equal on all of them.
     */
    private void sumOverBlock(long seq, int me, int mask, double[] partial) {
        for (int m = 1; m <= mask; m <<= 1) {
            for (int i = 0; i < 3; i++) {
                dots.putDouble(i * Double.BYTES, partial[i]);
            }
            exchange(seq, group.rankOf(me ^ m), dots, 0, 3 * Double.BYTES, partnerDots, 0, 3 * Double.BYTES);
            for (int i = 0; i < 3; i++) {
                partial[i] += partnerDots.getDouble(i * Double.BYTES);
            }
        }
    }

    /** a.b, a.a, b.b over {@code a[aFrom, aFrom + n)} and {@code b[bFrom, bFrom + n)}, in double precision. */
    private double[] localDots(Vector a, int aFrom, Vector b, int bFrom, int n) {
        double ab = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < n; i++) {
            double x = a.get(aFrom + i);
            double y = b.get(bFrom + i);
            ab += x * y;
            aa += x * x;
            bb += y * y;
        }
        sums[0] = ab;
        sums[1] = aa;
        sums[2] = bb;
        return sums;
    }

    /**
     * {@code own[from, from + n) = ca * a + cb * b}, where {@code own} is side a, or side b when {@code ownIsB},
     * and {@code other[otherFrom, ...)} the other side.
     */
    private static void combine(Vector own, int from, int n, Vector other, int otherFrom, boolean ownIsB,
            double[] dots) {
        double ab = dots[0];
        double ca = dots[1] == 0 ? ZERO_NORM_COEFFICIENT : 1 - ab / (2 * dots[1]);
        double cb = dots[2] == 0 ? ZERO_NORM_COEFFICIENT : 1 - ab / (2 * dots[2]);
        double cOwn = ownIsB ? cb : ca;
        double cOther = ownIsB ? ca : cb;
        for (int i = 0; i < n; i++) {
            own.set(from + i, cOwn * own.get(from + i) + cOther * other.get(otherFrom + i));
        }
    }

    /** Floating-point elements of a buffer from a byte offset, read and written by absolute index as doubles. */
    private static final class Vector {
        private ByteBuffer buffer;
        private int base;
        private DType dtype;

        Vector of(ByteBuffer buffer, int base, DType dtype) {
            this.buffer = buffer;
            this.base = base;
            this.dtype = dtype;
            return this;
        }

        double get(int i) {
            return switch (dtype) {
                case FLOAT64 -> buffer.getDouble(base + 8 * i);
                case FLOAT16 -> HalfFloats.halfToFloat(buffer.getShort(base + 2 * i));
                case BFLOAT16 -> HalfFloats.bfloat16ToFloat(buffer.getShort(base + 2 * i));
                default -> buffer.getFloat(base + 4 * i);
            };
        }

        void set(int i, double x) {
            switch (dtype) {
                case FLOAT64 -> buffer.putDouble(base + 8 * i, x);
                case FLOAT16 -> buffer.putShort(base + 2 * i, HalfFloats.floatToHalf((float) x));
                case BFLOAT16 -> buffer.putShort(base + 2 * i, HalfFloats.floatToBfloat16((float) x));
                default -> buffer.putFloat(base + 4 * i, (float) x);
            }
        }

        void scale(int from, int to, double factor) {
            for (int i = from; i < to; i++) {
                set(i, get(i) * factor);
            }
        }
    }
}
