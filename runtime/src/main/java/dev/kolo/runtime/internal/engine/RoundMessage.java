package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;

/**
 * Layout of one rank's message in an agreement round (little-endian), sent to every other rank over the data
 * plane by {@link RankGeneration}:
 *
 * <pre>
 *  0  int     flags (bit 0: this rank has joined)
 *  4  int     words: 64-bit words in each bit set (the same on every rank: the caches are identical)
 *  8  long    coordinator responses this rank holds, contiguously from sequence 0
 * 16  long[w] ready: cache ids of the tensors this rank has submitted and waits for
 *  .  long[w] invalid: cache ids every rank must drop (a name submitted with another spec, or waiting too long)
 *  .  bytes   the data of the ready allreduces small enough to travel in the round itself ("eager"), in id order
 * </pre>
 *
 * Which ready tensors carry eager data is a function of the ready set and the cached specs alone, so every
 * receiver finds each one's bytes without an index.
 */
public final class RoundMessage {
    static final int FLAGS = 0;
    static final int WORDS = 4;
    public static final int RECEIVED = 8;
    static final int BITS = 16;
    static final int FLAG_JOINED = 1;
    /**
     * Data a rank sends in one round to all its peers together, for its largest eager allreduce: each peer gets
     * a copy, so the bound per op shrinks with the ring (64 KiB at 2 ranks, 32 KiB at 3, 21 KiB at 4), never
     * below {@link #MIN_EAGER_OP_BYTES}. Up to it, one hop beats the ring's 2(n-1) steps on a loopback or LAN.
     */
    static final int EAGER_FAN_OUT_BYTES = 64 * 1024;
    static final int MIN_EAGER_OP_BYTES = 8 * 1024;
    /**
     * Eager data of one message, in eager ops: data of a tensor not ready on every rank travels again next round,
     * so this bounds the waste, and it keeps a round a small message.
     */
    static final int EAGER_OPS_PER_MESSAGE = 2;

    private RoundMessage() {
    }

    static int words(int ids) {
        return (ids + 63) >>> 6;
    }

    static int readyAt() {
        return BITS;
    }

    static int invalidAt(int words) {
        return BITS + 8 * words;
    }

    static int eagerAt(int words) {
        return BITS + 16 * words;
    }

    /** Largest allreduce whose data travels in the rounds of a ring of {@code size} ranks. */
    static int eagerOpBytes(int size) {
        return Math.max(MIN_EAGER_OP_BYTES, EAGER_FAN_OUT_BYTES / Math.max(1, size - 1));
    }

    /** Most eager data in one message of a ring of {@code size} ranks. */
    static int eagerBytes(int size) {
        return EAGER_OPS_PER_MESSAGE * eagerOpBytes(size);
    }

    static int maxBytes(int words, int size) {
        return eagerAt(words) + eagerBytes(size);
    }

    /** Whether a ready tensor of this spec sends its data in the round (while the budget lasts). */
    static boolean eager(OpSpec spec, int size) {
        return spec.type == OpType.ALLREDUCE && spec.groupSize == 0 && spec.byteSize() <= eagerOpBytes(size);
    }
}
