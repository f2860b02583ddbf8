package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.internal.collectives.RoundCombiner;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.PowerOfTwoGroup;

import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The agreement round as a recursive-doubling combine (as Horovod agrees with a bitwise allreduce of its bit
 * vector): {@code log2 p} steps in each of which partners swap their messages and both combine them with the
 * engine's {@link RoundCombiner}, so every rank sends {@code log2 n} messages per round where an all-to-all sends
 * {@code n-1}. On other sizes ({@link PowerOfTwoGroup}) the fold is an exchange both ways, because the folded rank
 * may be idle and must hear that a round began (a rank joins a round when bytes arrive); the unfold hands it the
 * result. Messages have any length up to the round's bound, which each frame header states and the receiver checks.
 *
 * <p>Three buffers rotate (this rank's message, the partner's, the combination, which the rule writes over the
 * lower message when it can), direct and little-endian, grown only when a larger bound is asked for: nothing is
 * allocated per round.
 */
public final class RoundCombine {
    private final Peers peers;
    private final PowerOfTwoGroup group;
    private final Swap swap = new Swap();
    private ByteBuffer mine = ByteBuffer.allocateDirect(0);
    private ByteBuffer theirs = ByteBuffer.allocateDirect(0);
    private ByteBuffer next = ByteBuffer.allocateDirect(0);
    private int messagesSent;

    public RoundCombine(Peers peers) {
        this.peers = peers;
        this.group = new PowerOfTwoGroup(peers.size, peers.rank);
    }

    /** @return the buffer this rank's next message is written to, at least {@code capacity} bytes */
    public ByteBuffer outbox(int capacity) {
        if (mine.capacity() < capacity) {
            int grown = (int) Math.min(Integer.MAX_VALUE, Math.max(capacity, 2L * mine.capacity()));
            mine = ByteBuffer.allocateDirect(grown).order(ByteOrder.LITTLE_ENDIAN);
            theirs = ByteBuffer.allocateDirect(grown).order(ByteOrder.LITTLE_ENDIAN);
            next = ByteBuffer.allocateDirect(grown).order(ByteOrder.LITTLE_ENDIAN);
        }
        return mine.clear(); // the frame writer left its cursors on the last message sent from it
    }

    /** @return the combined message of the last round, from offset 0 */
    public ByteBuffer result() {
        return mine.clear();
    }

    /** @return how many messages this rank sent in the last round */
    public int messagesSent() {
        return messagesSent;
    }

    /**
     * Combines {@code outbox()[0, length)} with every rank's message of the same round.
     *
     * @return the length of the combined message, now at {@link #result()}
     */
    public int run(long seq, int length, int maxBytes, RoundCombiner combiner) {
        if (length > mine.capacity() || length > maxBytes || maxBytes > mine.capacity()) {
            throw new IllegalArgumentException("round message of " + length + " bytes, bound " + maxBytes
                    + ", exceeds its buffer (" + mine.capacity() + ")");
        }
        messagesSent = 0;
        int rank = peers.rank;
        if (group.folds()) {
            int partner = group.foldPartner();
            int theirLength = exchange(seq, partner, length, true, maxBytes);
            length = combine(combiner, group.foldedAway(), length, theirLength, partner);
        }
        if (!group.foldedAway()) {
            int me = group.groupRank;
            for (int mask = 1; mask < group.p; mask <<= 1) {
                int partner = group.rankOf(me ^ mask);
                int theirLength = exchange(seq, partner, length, true, maxBytes);
                length = combine(combiner, (me & mask) == 0, length, theirLength, partner);
            }
        }
        if (group.folds()) {
            int partner = group.foldPartner();
            if (group.foldedAway()) {
                swap.of(mine, 0, false, theirs, maxBytes);
                peers.exchange(swap, partner, seq);
                ByteBuffer t = mine;
                mine = theirs;
                theirs = t;
                length = swap.received;
            } else {
                exchange(seq, partner, length, false, 0);
            }
        }
        return length;
    }

    /** Sends {@code mine[0, length)} to {@code partner} and, if asked, receives its message into {@link #theirs}. */
    private int exchange(long seq, int partner, int length, boolean receive, int maxBytes) {
        swap.of(mine, length, true, receive ? theirs : null, maxBytes);
        peers.exchange(swap, partner, seq);
        messagesSent++;
        return swap.received;
    }

    /**
     * {@code mine} becomes the combination of itself and {@code theirs}, as {@code lower op upper}: in place in the
     * lower of the two when the rule can (then, when that is {@code theirs}, the two swap roles), else into
     * {@code next}, which then becomes {@code mine}.
     */
    private int combine(RoundCombiner combiner, boolean mineIsLower, int myLength, int theirLength, int partner) {
        mine.clear();
        theirs.clear();
        int rank = peers.rank;
        ByteBuffer lower = mineIsLower ? mine : theirs;
        ByteBuffer upper = mineIsLower ? theirs : mine;
        int lowerLength = mineIsLower ? myLength : theirLength;
        int upperLength = mineIsLower ? theirLength : myLength;
        int lowerRank = mineIsLower ? rank : partner;
        int upperRank = mineIsLower ? partner : rank;
        int length = combiner.combineInPlace(lower, lowerLength, lowerRank, upper, upperLength, upperRank);
        if (length >= 0) {
            if (!mineIsLower) {
                theirs = mine;
                mine = lower;
            }
        } else {
            next.clear();
            length = combiner.combine(lower, lowerLength, lowerRank, upper, upperLength, upperRank, next);
            ByteBuffer t = mine;
            mine = next;
            next = t;
        }
        mine.clear();
        return length;
    }

    /** At most one frame each way: a whole message of known length out, one of at most a bound in. */
    private static final class Swap extends Schedule {
        private ByteBuffer send;
        private int sendLength;
        private ByteBuffer recv;
        private int maxBytes;
        private FrameReader reader;
        int received;

        void of(ByteBuffer send, int sendLength, boolean sends, ByteBuffer recv, int maxBytes) {
            this.send = send;
            this.sendLength = sendLength;
            this.recv = recv;
            this.maxBytes = maxBytes;
            this.sendUnits = sends ? 1 : 0;
            this.recvUnits = recv != null ? 1 : 0;
            this.received = 0;
        }

        @Override
        protected boolean sendReady(int u, int received) {
            return true;
        }

        @Override
        protected void beginSend(int u, FrameWriter w, long generation, long seq) {
            send.clear();
            w.begin(generation, seq, u, send, 0, sendLength);
        }

        @Override
        protected void beginRecv(int u, FrameReader r) {
            recv.clear();
            reader = r;
            r.beginUpTo(recv, 0, maxBytes);
        }

        @Override
        protected void received(int u) {
            received = reader.length();
            reader = null;
        }
    }
}
