package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.RoundCombiner;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.engine.execute.AverageScaling;
import java.nio.ByteBuffer;

/**
 * How two groups' {@link RoundMessage}s combine at a step of the round: flags OR, the fewest responses held (and
 * who holds that few), ready AND, invalid OR, eager AND with the data of each id both carry reduced as
 * {@code lower op upper}. Every rank applies it to the same pair the same way, so partners end alike, and the
 * round's result does not depend on which rank computed it.
 *
 * <p>Reused round after round under the engine lock: its scratch sets grow with the cache and nothing else is
 * allocated.
 */
final class RoundRule implements RoundCombiner {
    private final TensorCache cache;
    private final Reducer reducer;
    private final Tuning tuning;
    private final int size;
    private final int holderWords;
    private int words;
    private long[][] sets = new long[6][1];
    private long[] combined = new long[1];

    RoundRule(TensorCache cache, Reducer reducer, int size, Tuning tuning) {
        this.cache = cache;
        this.tuning = tuning;
        this.reducer = reducer;
        this.size = size;
        this.holderWords = RoundMessage.holderWords(size);
    }

    /** The round about to start covers {@code words} words of ids: messages covering another number are refused. */
    void startRound(int words) {
        this.words = words;
        if (sets[0].length < Math.max(words, holderWords)) {
            sets = new long[6][Math.max(words, holderWords)];
            combined = new long[Math.max(words, holderWords)];
        }
    }

    @Override
    public int combine(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength,
            int upperRank, ByteBuffer out) {
        int setsAt = RoundMessage.setsAt(size);
        int alikeData = alikeData(lower, lowerLength, lowerRank, upper, upperLength, upperRank, setsAt);
        if (alikeData >= 0) {
            return combineAlike(lower, lowerLength, lowerRank, upper, upperLength, upperRank, out, alikeData);
        }
        long[] lowReady = sets[0];
        long[] lowInvalid = sets[1];
        long[] lowEager = sets[2];
        int lowData = readSets(lower, lowerLength, lowerRank, setsAt, lowReady, lowInvalid, lowEager);
        out.putInt(RoundMessage.FLAGS, (lower.getInt(RoundMessage.FLAGS) | upper.getInt(RoundMessage.FLAGS))
                & RoundMessage.FLAG_JOINED);
        out.putInt(RoundMessage.WORDS, words);
        long lowReceived = lower.getLong(RoundMessage.RECEIVED);
        long upReceived = upper.getLong(RoundMessage.RECEIVED);
        out.putLong(RoundMessage.RECEIVED, Math.min(lowReceived, upReceived));
        combineTuning(lower, lowerRank, upper, upperRank, out);
        for (int w = 0; w < holderWords; w++) {
            int at = RoundMessage.HOLDERS + 8 * w;
            long l = lowReceived <= upReceived ? lower.getLong(at) : 0;
            long u = upReceived <= lowReceived ? upper.getLong(at) : 0;
            out.putLong(at, l | u);
        }
        long[] upReady = sets[3];
        long[] upInvalid = sets[4];
        long[] upEager = sets[5];
        int upData = readSets(upper, upperLength, upperRank, setsAt, upReady, upInvalid, upEager);
        int pos = setsAt;
        for (int w = 0; w < words; w++) {
            combined[w] = lowReady[w] & upReady[w];
        }
        pos = RoundMessage.writeSet(out, pos, combined, words);
        for (int w = 0; w < words; w++) {
            combined[w] = lowInvalid[w] | upInvalid[w];
        }
        pos = RoundMessage.writeSet(out, pos, combined, words);
        for (int w = 0; w < words; w++) {
            combined[w] = lowEager[w] & upEager[w];
        }
        pos = RoundMessage.writeSet(out, pos, combined, words);
        // Both messages' eager data in id order: an id both carry is combined, one only one carries is dropped
        // (not ready everywhere, or beyond a rank's budget: it runs on the data plane if agreed).
        for (int w = 0; w < words; w++) {
            long either = lowEager[w] | upEager[w];
            while (either != 0) {
                int bit = Long.numberOfTrailingZeros(either);
                either &= either - 1;
                int id = (w << 6) + bit;
                OpSpec spec = eagerSpec(id, lowerRank, upperRank);
                int bytes = (int) spec.byteSize();
                boolean inLow = (lowEager[w] & (1L << bit)) != 0;
                boolean inUp = (upEager[w] & (1L << bit)) != 0;
                if (inLow && lowData + bytes > lowerLength || inUp && upData + bytes > upperLength) {
                    throw refused(lowerRank, upperRank, "ends before the data of '" + spec.name + "'");
                }
                if (inLow && inUp) {
                    out.put(pos, lower, lowData, bytes);
                    reducer.reduce(spec.dtype, AverageScaling.sumOp(spec), out, pos, upper, upData,
                            (int) spec.numElements());
                    pos += bytes;
                }
                lowData += inLow ? bytes : 0;
                upData += inUp ? bytes : 0;
            }
        }
        return pos;
    }

    /** Alike messages ({@link #alikeData}) combine over the lower one; others need a third buffer. */
    @Override
    public int combineInPlace(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength,
            int upperRank) {
        int data = alikeData(lower, lowerLength, lowerRank, upper, upperLength, upperRank, RoundMessage.setsAt(size));
        return data < 0 ? -1 : combineAlike(lower, lowerLength, lowerRank, upper, upperLength, upperRank, lower, data);
    }

    /**
     * Checks both messages' headers, then whether they say the same (flags, responses held, tuning, every id set,
     * byte for byte) but for the ranks holding the responses and their data: the steady state, where every rank has
     * the same tensors ready.
     *
     * @return where the data begins when they are alike (the eager set read into {@code sets[2]}), else -1
     */
    private int alikeData(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength,
            int upperRank, int setsAt) {
        check(lower, lowerLength, lowerRank, setsAt);
        check(upper, upperLength, upperRank, setsAt);
        // The ready and invalid sets skipped, the eager set read: all the shortcut needs.
        int eagerAt = RoundMessage.skipSet(lower, RoundMessage.skipSet(lower, setsAt, lowerLength, words), lowerLength,
                words);
        int data = eagerAt < 0 ? -1 : RoundMessage.readSet(lower, eagerAt, lowerLength, sets[2], words);
        if (data < 0 || upperLength < data) {
            return -1;
        }
        for (int i = 0; i < RoundMessage.HOLDERS; i += 4) {
            if (lower.getInt(i) != upper.getInt(i)) {
                return -1;
            }
        }
        int i = setsAt;
        for (; i + 8 <= data; i += 8) {
            if (lower.getLong(i) != upper.getLong(i)) {
                return -1;
            }
        }
        for (; i < data; i += 4) { // sets are whole ints
            if (lower.getInt(i) != upper.getInt(i)) {
                return -1;
            }
        }
        return data;
    }

    /**
     * The combination of two messages that differ only in their holders and their eager data ({@link #alikeData}):
     * what the general rule computes for them, without decoding and encoding the id sets again (half the time of a
     * 4-byte allreduce's combine at np 2). The sets are copied as {@code lower} encodes them; {@code out} may be
     * {@code lower} itself, each byte then read before it is written.
     */
    private int combineAlike(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength,
            int upperRank, ByteBuffer out, int data) {
        long[] eager = sets[2];
        if (out != lower) {
            out.put(0, lower, 0, data);
        }
        out.putInt(RoundMessage.FLAGS, lower.getInt(RoundMessage.FLAGS) & RoundMessage.FLAG_JOINED);
        for (int w = 0; w < holderWords; w++) {
            int at = RoundMessage.HOLDERS + 8 * w;
            out.putLong(at, lower.getLong(at) | upper.getLong(at)); // both hold the same number of responses
        }
        int pos = data;
        for (int w = 0; w < words; w++) {
            long bits = eager[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = eagerSpec(id, lowerRank, upperRank);
                int bytes = (int) spec.byteSize();
                if (pos + bytes > lowerLength || pos + bytes > upperLength) {
                    throw refused(lowerRank, upperRank, "ends before the data of '" + spec.name + "'");
                }
                if (out != lower) {
                    out.put(pos, lower, pos, bytes);
                }
                reducer.reduce(spec.dtype, AverageScaling.sumOp(spec), out, pos, upper, pos, (int) spec.numElements());
                pos += bytes;
            }
        }
        return pos;
    }

    /** @return the spec of cache id {@code id}, whose data a message carries */
    private OpSpec eagerSpec(int id, int lowerRank, int upperRank) {
        OpSpec spec = cache.spec(id);
        if (spec == null || !RoundMessage.eager(spec, tuning.values().eagerOpBytes())) {
            throw refused(lowerRank, upperRank, "carries data for cache id " + id
                    + (spec == null ? ", which this rank does not hold" : ", which does not travel in rounds"));
        }
        return spec;
    }

    /** The tuned values of the higher version; two sides of one version must carry the same values. */
    private static void combineTuning(ByteBuffer lower, int lowerRank, ByteBuffer upper, int upperRank,
            ByteBuffer out) {
        int lowVersion = lower.getInt(RoundMessage.TUNE_VERSION);
        int upVersion = upper.getInt(RoundMessage.TUNE_VERSION);
        ByteBuffer from = upVersion > lowVersion ? upper : lower;
        if (lowVersion == upVersion && (lower.getInt(RoundMessage.TUNE_FUSION) != upper.getInt(RoundMessage.TUNE_FUSION)
                || lower.getInt(RoundMessage.TUNE_EAGER) != upper.getInt(RoundMessage.TUNE_EAGER)
                || lower.getInt(RoundMessage.TUNE_CYCLE) != upper.getInt(RoundMessage.TUNE_CYCLE))) {
            throw refused(lowerRank, upperRank, "carry different tuned values under version " + lowVersion);
        }
        out.putInt(RoundMessage.TUNE_VERSION, Math.max(lowVersion, upVersion));
        out.putInt(RoundMessage.TUNE_FUSION, from.getInt(RoundMessage.TUNE_FUSION));
        out.putInt(RoundMessage.TUNE_EAGER, from.getInt(RoundMessage.TUNE_EAGER));
        out.putInt(RoundMessage.TUNE_CYCLE, from.getInt(RoundMessage.TUNE_CYCLE));
    }

    private void check(ByteBuffer m, int length, int rank, int setsAt) {
        if (length < setsAt || m.getInt(RoundMessage.WORDS) != words) {
            throw new KoloException("protocol error: the round message from rank " + rank + "'s side has "
                    + (length >= 8 ? m.getInt(RoundMessage.WORDS) : -1) + " cache words in " + length
                    + " bytes; this rank has " + words + ": the ranks' caches differ");
        }
        if (m.getLong(RoundMessage.RECEIVED) < 0) {
            throw new KoloException("protocol error: the round message from rank " + rank + "'s side reports "
                    + m.getLong(RoundMessage.RECEIVED) + " coordinator responses");
        }
    }

    private int readSets(ByteBuffer m, int length, int rank, int at, long[] ready, long[] invalid, long[] eager) {
        at = RoundMessage.readSet(m, at, length, ready, words);
        at = at < 0 ? -1 : RoundMessage.readSet(m, at, length, invalid, words);
        at = at < 0 ? -1 : RoundMessage.readSet(m, at, length, eager, words);
        if (at < 0) {
            throw new KoloException("protocol error: the round message from rank " + rank + "'s side has a malformed "
                    + "id set (" + length + " bytes for " + words + " cache words)");
        }
        return at;
    }

    private static KoloException refused(int lowerRank, int upperRank, String problem) {
        return new KoloException("protocol error: a round message of ranks " + lowerRank + " and " + upperRank + " "
                + problem + ": the ranks' caches differ");
    }
}
