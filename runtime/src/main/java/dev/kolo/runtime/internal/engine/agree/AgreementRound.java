package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.autotune.TunedValues;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.engine.execute.AverageScaling;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One agreement round on the data plane, as this rank takes part in it: it writes this rank's
 * {@link RoundMessage} (ready ids, invalid ids, responses held, joined, the data of small ready allreduces),
 * combines it with every rank's by the data plane's recursive doubling under the {@link RoundRule}, and reads
 * from the combination what every rank reads alike: the ids ready on every rank (in id order, groups complete and
 * together), the eager data of those every rank sent (already reduced), the entries to drop, the fewest responses
 * any rank holds (and who holds that few) and whether any rank has joined.
 *
 * <p>Reused round after round by the generation that made it, under the engine lock: no allocation for the
 * bookkeeping of a steady-state round.
 */
final class AgreementRound {
    /** Told what this rank cannot follow in a round: the generation ends. */
    private final Consumer<String> protocolErrors;
    private final int rank;
    private final int size;
    private final TensorCache cache;
    private final WaitingTensors waiting;
    private final Observability observability;
    private final KoloMetrics metrics;
    private final Reducer reducer;
    private final RoundRule rule;
    private final Tuning tuning;
    /** Rounds of this generation so far: the same count on every rank, since every rank takes part in each. */
    long rounds;

    // Scratch, reused.
    private long[] agreedBits = new long[1];
    private long[] invalidBits = new long[1];
    private long[] eagerBits = new long[1];
    private int[] agreed = new int[16];
    /** Where the combined message holds the reduced data of the k-th agreed id, or -1: {@code eagerOffsets[k]}. */
    private int[] eagerOffsets = new int[16];

    // The round in progress.
    private DataPlane dataPlane;
    private ByteBuffer result;
    private int resultLength;
    private int words;
    private int max;
    private int dataAt;

    // What the round found.
    /**
     * When the combination was complete, the end of the agreement: read then when meters or the timeline record,
     * else 0 until {@link #agreedAt()} reads it (a clock reading costs 25 ns of a 4-byte op of 700).
     */
    long agreedAt;
    /** The fewest coordinator responses any rank holds (this rank included). */
    long minReceived;
    /** The ranks that lack the oldest response this rank holds and has not run, or null. */
    List<Integer> lacking;
    /** Some rank (perhaps this one) has joined. */
    boolean someJoined;

    /** @param rank this rank among the generation's {@code size} */
    AgreementRound(int rank, int size, TensorCache cache, WaitingTensors waiting, Observability observability,
            Reducer reducer, Tuning tuning, Consumer<String> protocolErrors) {
        this.protocolErrors = protocolErrors;
        this.rank = rank;
        this.size = size;
        this.cache = cache;
        this.waiting = waiting;
        this.observability = observability;
        this.metrics = observability.metrics;
        this.reducer = reducer;
        this.tuning = tuning;
        this.rule = new RoundRule(cache, reducer, size, tuning);
    }

    /**
     * Writes this rank's message into the data plane's outbox, then forgets the invalid ids it carries.
     *
     * @return the message's length
     */
    int write(DataPlane dp, boolean joined, long received) {
        dataPlane = dp;
        words = RoundMessage.words(cache.idLimit());
        max = RoundMessage.maxBytes(words, size, tuning.values().eagerOpBytes());
        ensureWords(words);
        rule.startRound(words);
        ByteBuffer out = dp.roundOutbox(max);
        out.putInt(RoundMessage.FLAGS, joined ? RoundMessage.FLAG_JOINED : 0).putInt(RoundMessage.WORDS, words)
                .putLong(RoundMessage.RECEIVED, received);
        TunedValues sent = tuning.valuesToSend();
        out.putInt(RoundMessage.TUNE_VERSION, tuning.versionToSend()).putInt(RoundMessage.TUNE_FUSION,
                sent.fusionThreshold()).putInt(RoundMessage.TUNE_EAGER, sent.eagerOpBytes())
                .putInt(RoundMessage.TUNE_CYCLE, sent.cycleMicros());
        for (int w = 0; w < RoundMessage.holderWords(size); w++) {
            out.putLong(RoundMessage.HOLDERS + 8 * w, w == rank >>> 6 ? 1L << rank : 0L);
        }
        for (int w = 0; w < words; w++) {
            agreedBits[w] = waiting.readyWord(w);
            invalidBits[w] = waiting.invalidWord(w);
        }
        chooseEager();
        int pos = RoundMessage.writeSet(out, RoundMessage.setsAt(size), agreedBits, words);
        pos = RoundMessage.writeSet(out, pos, invalidBits, words);
        pos = RoundMessage.writeSet(out, pos, eagerBits, words);
        pos = writeEager(out, pos);
        waiting.clearInvalid();
        return pos;
    }

    /**
     * Combines the written message with every rank's and reads the combination.
     *
     * @param received the coordinator responses this rank holds
     * @param executed the coordinator responses this rank has run
     * @return how many ids every rank has ready and none marked invalid, or -1 after a protocol error
     */
    int exchange(int length, long received, long executed) {
        DataPlane dp = dataPlane;
        resultLength = dp.combineRound(length, max, rule);
        agreedAt = observability.timed() ? System.nanoTime() : 0;
        metrics.round(dp.roundMessagesSent());
        result = dp.roundResult();
        ByteBuffer in = result;
        if (resultLength < RoundMessage.setsAt(size) || in.getInt(RoundMessage.WORDS) != words) {
            protocolErrors.accept("the round's combined message has " + resultLength + " bytes for "
                    + (resultLength >= 8 ? in.getInt(RoundMessage.WORDS) : -1) + " cache words; this rank has "
                    + words + ": the ranks' caches differ");
            return -1;
        }
        someJoined = (in.getInt(RoundMessage.FLAGS) & RoundMessage.FLAG_JOINED) != 0;
        rounds++;
        int tuneVersion = in.getInt(RoundMessage.TUNE_VERSION);
        if (tuneVersion > tuning.version()) { // new values: read (and allocated) only when they change
            TunedValues tuned = tunedValues(in);
            if (tuned == null) {
                protocolErrors.accept("the round's combined message carries negative tuned values");
                return -1;
            }
            tuning.roundEnded(tuneVersion, tuned, rounds, agreedAt());
        }
        minReceived = Math.min(received, in.getLong(RoundMessage.RECEIVED));
        lacking = null;
        if (minReceived <= executed && received > executed) {
            // Every rank has run at most the fewest any holds, so the ranks holding that few lack the next one.
            for (int w = 0; w < RoundMessage.holderWords(size); w++) {
                long bits = in.getLong(RoundMessage.HOLDERS + 8 * w);
                while (bits != 0) {
                    int r = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    if (lacking == null) {
                        lacking = new ArrayList<>();
                    }
                    lacking.add(r);
                }
            }
        }
        int pos = RoundMessage.readSet(in, RoundMessage.setsAt(size), resultLength, agreedBits, words);
        pos = pos < 0 ? -1 : RoundMessage.readSet(in, pos, resultLength, invalidBits, words);
        pos = pos < 0 ? -1 : RoundMessage.readSet(in, pos, resultLength, eagerBits, words);
        if (pos < 0) {
            protocolErrors.accept("the round's combined message has a malformed id set");
            return -1;
        }
        dataAt = pos;
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

    /** @return when the last combination was complete ({@link #agreedAt}), reading the clock now if it was not then */
    long agreedAt() {
        if (agreedAt == 0) {
            agreedAt = System.nanoTime();
        }
        return agreedAt;
    }

    /**
     * Finds the eager data of the {@code n} agreed ids in the combination, then keeps back the members of
     * incomplete groups. @return how many agreed ids run now, or -1 after a protocol error
     */
    int settle(int n) {
        if (eagerOffsets.length < agreed.length) {
            eagerOffsets = new int[agreed.length];
        }
        Arrays.fill(eagerOffsets, 0, n, -1);
        int pos = dataAt;
        int k = 0;
        for (int w = 0; w < words; w++) {
            long bits = eagerBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                if (spec == null) {
                    protocolErrors.accept("the round carries data for cache id " + id
                            + ", which this rank does not hold");
                    return -1;
                }
                int bytes = (int) spec.byteSize();
                if (pos + bytes > resultLength) {
                    protocolErrors.accept("the round's combined message ends before the data of '" + spec.name
                            + "'");
                    return -1;
                }
                while (k < n && agreed[k] < id) {
                    k++;
                }
                if (k < n && agreed[k] == id) {
                    eagerOffsets[k] = pos;
                }
                pos += bytes;
            }
        }
        return completeGroups(n);
    }

    /** @return the k-th id to run, in the order every rank runs them */
    int agreed(int k) {
        return agreed[k];
    }

    /**
     * @return whether every rank sent the data of the k-th agreed id in this round: the op is complete with the
     *         round, its reduced data at {@link #eagerOffset(int)} of {@link #eagerData()}
     */
    boolean eagerEverywhere(int k) {
        return eagerOffsets[k] >= 0;
    }

    /** @return the buffer holding the round's combination */
    ByteBuffer eagerData() {
        return result;
    }

    /** @return where the reduced data of the k-th agreed id begins in {@link #eagerData()} */
    int eagerOffset(int k) {
        return eagerOffsets[k];
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

    /** The ready small allreduces whose data this rank sends, in id order while the budget lasts: {@link #eagerBits}. */
    private void chooseEager() {
        int eagerOpBytes = tuning.values().eagerOpBytes();
        int budget = RoundMessage.eagerBytes(eagerOpBytes);
        for (int w = 0; w < words; w++) {
            long bits = agreedBits[w];
            long chosen = 0;
            while (bits != 0) {
                int bit = Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec((w << 6) + bit);
                int bytes = (int) spec.byteSize();
                if (RoundMessage.eager(spec, eagerOpBytes) && bytes <= budget) {
                    chosen |= 1L << bit;
                    budget -= bytes;
                }
            }
            eagerBits[w] = chosen;
        }
    }

    /** The chosen tensors' data from {@code pos}, each prescaled as a sender on the data plane would. @return the end */
    private int writeEager(ByteBuffer out, int pos) {
        for (int w = 0; w < words; w++) {
            long bits = eagerBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                int bytes = (int) spec.byteSize();
                out.put(pos, waiting.get(id).input.data(), 0, bytes);
                double prescale = AverageScaling.prescale(spec, size);
                if (prescale != 1.0) {
                    reducer.scale(spec.dtype, out, pos, (int) spec.numElements(), prescale);
                }
                pos += bytes;
            }
        }
        return pos;
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
        int[] offsets = eagerOffsets.clone();
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
            eagerOffsets[i] = offsets[order[i]];
        }
        return m;
    }

    /** The bit sets of a round cover {@code words} words. */
    private void ensureWords(int words) {
        if (agreedBits.length < words) {
            agreedBits = new long[words];
            invalidBits = new long[words];
            eagerBits = new long[words];
        }
    }

    /** @return the tuned values of a combined message, or null when they are not values (a faulty peer) */
    private static TunedValues tunedValues(ByteBuffer in) {
        int fusion = in.getInt(RoundMessage.TUNE_FUSION);
        int eager = in.getInt(RoundMessage.TUNE_EAGER);
        int cycle = in.getInt(RoundMessage.TUNE_CYCLE);
        return fusion < 0 || eager < 0 || cycle < 0 ? null : new TunedValues(fusion, eager, cycle);
    }
}
