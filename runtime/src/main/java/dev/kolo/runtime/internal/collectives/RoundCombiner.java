package dev.kolo.runtime.internal.collectives;

import java.nio.ByteBuffer;

/**
 * How two agreement-round messages become one: the engine's rule (its bit sets, counters and eager data), which
 * the data plane applies at each step of {@link DataPlane#combineRound}. It must be deterministic and its result
 * must not depend on which rank computes it, so that both partners of a step hold the same message afterwards.
 */
public interface RoundCombiner {
    /**
     * Writes the combination of two messages into {@code out} from offset 0.
     *
     * @param lower the message of the group with the lower ranks, {@code [0, lowerLength)}
     * @param upper the other group's message, {@code [0, upperLength)}
     * @param upperRank a rank of the upper group, to name in an error (the lower one is {@code lowerRank})
     * @return the combined message's length, at most the bound the round was started with
     * @throws dev.kolo.runtime.KoloException naming the problem when the two cannot be combined (the ranks'
     *         caches differ, or a message is malformed); the round then fails on every rank
     */
    int combine(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength, int upperRank,
            ByteBuffer out);

    /**
     * Writes the combination of two messages over {@code lower}, from offset 0, when the rule can do so in place (it
     * is never longer than {@code lower}, and no byte is read after it is written); else leaves both untouched. The
     * same combination as {@link #combine}, one pass over the data fewer: the data plane tries this first.
     *
     * @return the combined message's length, or -1 when the two need {@link #combine} (the buffers are unchanged)
     * @throws dev.kolo.runtime.KoloException as {@link #combine} does
     */
    default int combineInPlace(ByteBuffer lower, int lowerLength, int lowerRank, ByteBuffer upper, int upperLength,
            int upperRank) {
        return -1;
    }
}
