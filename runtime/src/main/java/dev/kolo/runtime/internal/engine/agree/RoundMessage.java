package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.nio.ByteBuffer;

/**
 * Layout of an agreement-round message (little-endian): one rank's as it starts the round, or the combination of
 * a group of ranks' as the round's recursive doubling builds it ({@link RoundRule}); at the end every rank holds
 * the combination of all:
 *
 * <pre>
 *  0  int      flags (bit 0: a rank of the group has joined)
 *  4  int      words: 64-bit words of each id set (the same on every rank: the caches are identical)
 *  8  long     received: the fewest coordinator responses a rank of the group holds, contiguously from 0
 * 16  int      tuning version: of the knobs' values that follow (0: the job's settings; the highest wins)
 * 20  int      fusion threshold, bytes        (the values of that version: see {@link Tuning})
 * 24  int      eager size, bytes
 * 28  int      coordinator cycle time, microseconds
 * 32  long[h]  holders: the ranks of the group holding exactly that many (h = ceil(size / 64) words)
 *  .  set      ready: cache ids every rank of the group has submitted and waits for (AND)
 *  .  set      invalid: cache ids every rank must drop, a name submitted with another spec or waiting too long (OR)
 *  .  set      eager: ready ids whose data follows, already reduced over the group (AND)
 *  .  bytes    the eager data, in id order, each prescaled by its rank before the first combination
 * set:  int k, then k ids (int, ascending) when k >= 0 ("sparse"), or when k == -1 the words of a bit set
 * </pre>
 *
 * A set is written sparse when that is shorter: a job with a large cache and few tensors ready sends a few ids,
 * not the whole bit set.
 */
public final class RoundMessage {
    static final int FLAGS = 0;
    static final int WORDS = 4;
    public static final int RECEIVED = 8;
    static final int TUNE_VERSION = 16;
    static final int TUNE_FUSION = 20;
    static final int TUNE_EAGER = 24;
    static final int TUNE_CYCLE = 28;
    public static final int HOLDERS = 32;
    static final int FLAG_JOINED = 1;
    private static final int DENSE = -1;
    /**
     * The largest eager allreduce: {@code 64 KiB / (n - 1)} per op (64 KiB at 2 ranks, 21 KiB at 4), never below
     * {@link #MIN_EAGER_OP_BYTES}. Up to it, riding in the round beats a separate allreduce after it; a 64 KiB bound
     * at every n measured no better at np 4 and 8 (docs/PERFORMANCE.md).
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

    /** @return the 64-bit words of the holders set for a job of {@code size} */
    public static int holderWords(int size) {
        return (size + 63) >>> 6;
    }

    /** @return where the id sets begin in a message of a job of {@code size} */
    static int setsAt(int size) {
        return HOLDERS + 8 * holderWords(size);
    }

    /** Largest allreduce whose data travels in the rounds of a job of {@code size} ranks, unless tuned. */
    public static int eagerOpBytes(int size) {
        return Math.max(MIN_EAGER_OP_BYTES, EAGER_FAN_OUT_BYTES / Math.max(1, size - 1));
    }

    /** Most eager data in one message when the largest eager allreduce is {@code eagerOpBytes}. */
    static int eagerBytes(int eagerOpBytes) {
        return EAGER_OPS_PER_MESSAGE * eagerOpBytes;
    }

    /** @return the longest message: every set dense, the whole eager budget */
    static int maxBytes(int words, int size, int eagerOpBytes) {
        return setsAt(size) + 3 * denseBytes(words) + eagerBytes(eagerOpBytes);
    }

    private static int denseBytes(int words) {
        return 4 + 8 * words;
    }

    /** Whether a ready tensor of this spec sends its data in the round (while the budget lasts). */
    static boolean eager(OpSpec spec, int eagerOpBytes) {
        // Adasum is no element-wise sum: the round's combine cannot do it.
        return spec.type == OpType.ALLREDUCE && spec.groupSize == 0 && spec.reduceOp != ReduceOp.ADASUM
                && spec.byteSize() <= eagerOpBytes;
    }

    /**
     * Writes {@code bits[0, words)} at {@code at}, sparse when shorter.
     *
     * @return where the set ends
     */
    static int writeSet(ByteBuffer b, int at, long[] bits, int words) {
        int count = 0;
        for (int w = 0; w < words; w++) {
            count += Long.bitCount(bits[w]);
        }
        if (4 * count >= 8 * words) {
            b.putInt(at, DENSE);
            for (int w = 0; w < words; w++) {
                b.putLong(at + 4 + 8 * w, bits[w]);
            }
            return at + denseBytes(words);
        }
        b.putInt(at, count);
        int pos = at + 4;
        for (int w = 0; w < words; w++) {
            long x = bits[w];
            while (x != 0) {
                b.putInt(pos, (w << 6) + Long.numberOfTrailingZeros(x));
                pos += 4;
                x &= x - 1;
            }
        }
        return pos;
    }

    /**
     * @return where the set at {@code at} ends (as {@link #readSet} finds it, without reading its ids), or -1 when
     *         {@code at} is -1 or the set does not fit before {@code limit}
     */
    static int skipSet(ByteBuffer b, int at, int limit, int words) {
        if (at < 0 || at + 4 > limit) {
            return -1;
        }
        int k = b.getInt(at);
        long end = k == DENSE ? at + (long) denseBytes(words) : k < 0 || k > 64 * words ? -1 : at + 4 + 4L * k;
        return end < 0 || end > limit ? -1 : (int) end;
    }

    /**
     * Reads a set written by {@link #writeSet} at {@code at} into {@code bits[0, words)}.
     *
     * @return where the set ends, or -1 when it does not fit before {@code limit} or names an id beyond the words
     */
    static int readSet(ByteBuffer b, int at, int limit, long[] bits, int words) {
        if (at + 4 > limit) {
            return -1;
        }
        int k = b.getInt(at);
        if (k == DENSE) {
            if (at + denseBytes(words) > limit) {
                return -1;
            }
            for (int w = 0; w < words; w++) {
                bits[w] = b.getLong(at + 4 + 8 * w);
            }
            return at + denseBytes(words);
        }
        if (k < 0 || k > 64 * words || at + 4 + 4L * k > limit) {
            return -1;
        }
        java.util.Arrays.fill(bits, 0, words, 0L);
        for (int i = 0; i < k; i++) {
            int id = b.getInt(at + 4 + 4 * i);
            if (id < 0 || id >= 64 * words) {
                return -1;
            }
            bits[id >>> 6] |= 1L << id;
        }
        return at + 4 + 4 * k;
    }
}
