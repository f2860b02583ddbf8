package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One agreement round on the data plane, as this rank takes part in it: it writes this rank's
 * {@link RoundMessage} (ready ids, invalid ids, responses held, joined, the data of small ready allreduces),
 * exchanges it with every rank, and derives from all the messages what every rank derives alike: the ids ready
 * on every rank (in id order, groups complete and together), where each one's eager data lies in every
 * message, the entries to drop, the fewest responses any rank holds and whether any rank has joined.
 *
 * <p>Reused round after round by its {@link RankGeneration}, under the engine lock: no allocation for the
 * bookkeeping of a steady-state round.
 */
final class AgreementRound {
    private final RankGeneration generation;
    private final int rank;
    private final int size;
    private final TensorCache cache;
    private final WaitingTensors waiting;
    private final KoloMetrics metrics;

    // Scratch, reused.
    private long[] agreedBits = new long[1];
    private long[] invalidBits = new long[1];
    private int[] agreed = new int[16];
    /** Where rank r's message holds the eager data of the k-th agreed id, or -1: {@code eagerOffsets[r][k]}. */
    private final int[][] eagerOffsets;
    private final ByteBuffer[] vectors;
    private final int[] vectorOffsets;

    // The round in progress.
    private DataPlane dataPlane;
    private ByteBuffer out;
    private ByteBuffer in;
    private int words;
    private int max;
    private boolean joined;

    // What the exchange found.
    /** When the messages were all here: the end of the agreement. */
    long agreedAt;
    /** The fewest coordinator responses any rank holds (this rank included). */
    long minReceived;
    /** The ranks that lack the oldest response this rank holds and has not run, or null. */
    List<Integer> lacking;
    /** Some rank (perhaps this one) has joined. */
    boolean someJoined;

    AgreementRound(RankGeneration generation, TensorCache cache, WaitingTensors waiting, KoloMetrics metrics) {
        this.generation = generation;
        this.rank = generation.rank;
        this.size = generation.size;
        this.cache = cache;
        this.waiting = waiting;
        this.metrics = metrics;
        this.eagerOffsets = new int[size][16];
        this.vectors = new ByteBuffer[size];
        this.vectorOffsets = new int[size];
    }

    /**
     * Writes this rank's message into the data plane's outbox, then forgets the invalid ids it carries.
     *
     * @return the message's length
     */
    int write(DataPlane dp, boolean joined, long received) {
        dataPlane = dp;
        this.joined = joined;
        words = RoundMessage.words(cache.idLimit());
        max = RoundMessage.maxBytes(words, size);
        ensureWords(words);
        out = dp.roundOutbox(max);
        out.putInt(RoundMessage.FLAGS, joined ? RoundMessage.FLAG_JOINED : 0).putInt(RoundMessage.WORDS, words)
                .putLong(RoundMessage.RECEIVED, received);
        int invalidAt = RoundMessage.invalidAt(words);
        for (int w = 0; w < words; w++) {
            long ready = waiting.readyWord(w);
            long inv = waiting.invalidWord(w);
            out.putLong(RoundMessage.BITS + 8 * w, ready);
            out.putLong(invalidAt + 8 * w, inv);
            agreedBits[w] = ready;
            invalidBits[w] = inv;
        }
        int end = writeEager();
        waiting.clearInvalid();
        return end;
    }

    /**
     * Exchanges the written message with every rank and reads theirs.
     *
     * @param received the coordinator responses this rank holds
     * @param executed the coordinator responses this rank has run
     * @return how many ids every rank has ready and none marked invalid, or -1 after a protocol error
     */
    int exchange(int length, long received, long executed) {
        DataPlane dp = dataPlane;
        dp.exchangeRound(length, max);
        agreedAt = System.nanoTime();
        metrics.round();

        in = dp.roundInbox();
        minReceived = received;
        lacking = null;
        someJoined = joined;
        int invalidAt = RoundMessage.invalidAt(words);
        for (int j = 0; j < size; j++) {
            if (j == rank) {
                continue;
            }
            int base = dp.roundOffset(j);
            int len = dp.roundLength(j);
            if (len < RoundMessage.eagerAt(words) || in.getInt(base + RoundMessage.WORDS) != words) {
                generation.protocolError("rank " + j + " sent a round message of " + len + " bytes for "
                        + (len >= 8 ? in.getInt(base + RoundMessage.WORDS) : -1) + " cache words; this rank has "
                        + words + ": the ranks' caches differ");
                return -1;
            }
            someJoined |= (in.getInt(base + RoundMessage.FLAGS) & RoundMessage.FLAG_JOINED) != 0;
            long theirs = in.getLong(base + RoundMessage.RECEIVED);
            if (theirs < 0) {
                generation.protocolError("rank " + j + " reports " + theirs + " coordinator responses");
                return -1;
            }
            minReceived = Math.min(minReceived, theirs);
            if (theirs <= executed && received > executed) {
                if (lacking == null) {
                    lacking = new ArrayList<>();
                }
                lacking.add(j);
            }
            for (int w = 0; w < words; w++) {
                agreedBits[w] &= in.getLong(base + RoundMessage.BITS + 8 * w);
                invalidBits[w] |= in.getLong(base + invalidAt + 8 * w);
            }
        }
        int n = 0;
        for (int w = 0; w < words; w++) {
            long bits = agreedBits[w] & ~invalidBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (n == agreed.length) {
                    agreed = Arrays.copyOf(agreed, 2 * n);
                }
                agreed[n++] = id;
            }
        }
        return n;
    }

    /**
     * Finds the eager data of the {@code n} agreed ids in every message, then keeps back the members of
     * incomplete groups. @return how many agreed ids run now, or -1 after a protocol error
     */
    int settle(int n) {
        for (int r = 0; r < size; r++) {
            ByteBuffer buf = r == rank ? out : in;
            int base = r == rank ? 0 : dataPlane.roundOffset(r);
            int length = r == rank ? Integer.MAX_VALUE : dataPlane.roundLength(r);
            if (!locateEager(r, buf, base, length, n)) {
                return -1;
            }
        }
        return completeGroups(n);
    }

    /** @return the k-th id to run, in the order every rank runs them */
    int agreed(int k) {
        return agreed[k];
    }

    /**
     * @return whether every rank sent the data of the k-th agreed id in this round (then {@link #vectors} and
     *         {@link #vectorOffsets} point at it, rank by rank): the op is complete with the round
     */
    boolean eagerEverywhere(int k) {
        for (int r = 0; r < size; r++) {
            if (eagerOffsets[r][k] < 0) {
                return false;
            }
        }
        for (int r = 0; r < size; r++) {
            vectors[r] = r == rank ? out : in;
            vectorOffsets[r] = r == rank ? eagerOffsets[r][k] : dataPlane.roundOffset(r) + eagerOffsets[r][k];
        }
        return true;
    }

    /** Rank r's eager data of the id last found {@link #eagerEverywhere} is {@code vectors()[r]} at its offset. */
    ByteBuffer[] vectors() {
        return vectors;
    }

    int[] vectorOffsets() {
        return vectorOffsets;
    }

    /** Drops from the cache every id some rank marked invalid in this round, telling {@code removed} each one. */
    void dropInvalid(List<Integer> removed) {
        for (int w = 0; w < words; w++) {
            long bits = invalidBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (cache.spec(id) != null) {
                    cache.remove(id);
                    removed.add(id);
                }
            }
        }
    }

    /** Data of this rank's ready small allreduces, in id order, as every receiver expects it. */
    private int writeEager() {
        int pos = RoundMessage.eagerAt(words);
        int budget = RoundMessage.eagerBytes(size);
        for (int w = 0; w < words; w++) {
            long bits = waiting.readyWord(w);
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                int bytes = (int) spec.byteSize();
                if (RoundMessage.eager(spec, size) && bytes <= budget) {
                    out.put(pos, waiting.get(id).input.data(), 0, bytes);
                    pos += bytes;
                    budget -= bytes;
                }
            }
        }
        return pos;
    }

    /**
     * Where rank r's message holds the data of each agreed id, or -1 where it sent none: the same rule as
     * {@link #writeEager} applied to that rank's ready set. @return false after a protocol error
     */
    private boolean locateEager(int r, ByteBuffer buf, int base, int length, int n) {
        if (eagerOffsets[r].length < n) {
            eagerOffsets[r] = new int[agreed.length];
        }
        int[] offsets = eagerOffsets[r];
        Arrays.fill(offsets, 0, n, -1);
        int pos = RoundMessage.eagerAt(words);
        int budget = RoundMessage.eagerBytes(size);
        int k = 0;
        for (int w = 0; w < words && k < n; w++) {
            long bits = buf.getLong(base + RoundMessage.BITS + 8 * w);
            while (bits != 0 && k < n) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                if (spec == null) {
                    generation.protocolError("rank " + r + " is ready for cache id " + id
                            + ", which this rank does not hold");
                    return false;
                }
                while (k < n && agreed[k] < id) {
                    k++;
                }
                int bytes = (int) spec.byteSize();
                if (RoundMessage.eager(spec, size) && bytes <= budget) {
                    if (pos + bytes > length) {
                        generation.protocolError("rank " + r + "'s round message ends before the data of '"
                                + spec.name + "'");
                        return false;
                    }
                    if (k < n && agreed[k] == id) {
                        offsets[k] = pos;
                    }
                    pos += bytes;
                    budget -= bytes;
                }
            }
        }
        return true;
    }

    /**
     * Members of a group run only together: a member whose group is not complete among the agreed ids waits
     * (it stays ready, so a later round takes it with the rest). Complete groups move together, in member
     * order, at their first member's place, so that they fuse. @return how many agreed ids remain
     */
    private int completeGroups(int n) {
        Map<String, List<Integer>> groups = null;
        for (int k = 0; k < n; k++) {
            OpSpec s = cache.spec(agreed[k]);
            if (s.groupSize > 1) {
                if (groups == null) {
                    groups = new LinkedHashMap<>();
                }
                groups.computeIfAbsent(s.groupName(), g -> new ArrayList<>()).add(k);
            }
        }
        if (groups == null) {
            return n;
        }
        int[] order = new int[n];
        int m = 0;
        int[][] offsets = new int[size][];
        for (int r = 0; r < size; r++) {
            offsets[r] = eagerOffsets[r].clone();
        }
        int[] ids = agreed.clone();
        for (int k = 0; k < n; k++) {
            OpSpec s = cache.spec(ids[k]);
            if (s.groupSize < 2) {
                order[m++] = k;
                continue;
            }
            List<Integer> members = groups.get(s.groupName());
            if (members == null || members.size() < s.groupSize || members.get(0) != k) {
                continue; // incomplete (waits), or placed with its group's first member
            }
            members.sort((x, y) -> Integer.compare(OpSpec.groupIndex(cache.spec(ids[x]).name),
                    OpSpec.groupIndex(cache.spec(ids[y]).name)));
            for (int member : members) {
                order[m++] = member;
            }
        }
        for (int i = 0; i < m; i++) {
            agreed[i] = ids[order[i]];
            for (int r = 0; r < size; r++) {
                eagerOffsets[r][i] = offsets[r][order[i]];
            }
        }
        return m;
    }

    /** The bit sets of a round cover {@code words} words. */
    private void ensureWords(int words) {
        if (agreedBits.length < words) {
            agreedBits = new long[words];
            invalidBits = new long[words];
        }
    }
}
