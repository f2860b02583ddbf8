package dev.kolo.elastic.data;

import java.util.Random;

/**
 * The order in which one epoch visits a data set: a permutation drawn from the seed and the epoch alone (every rank
 * draws the same one without a message; {@link Random} is specified to the bit, so every JDK draws it alike), or
 * the data set's own order when not shuffling. Kept for the epoch it was drawn for and drawn again for the next.
 */
final class EpochOrder {
    private final boolean shuffle;
    private int[] order = new int[0];
    private long seed;
    private long epoch = -1;

    EpochOrder(boolean shuffle) {
        this.shuffle = shuffle;
    }

    /** @return the order of {@code epoch} over {@code count} samples (not a copy: read it, never write it) */
    int[] of(long seed, long epoch, int count) {
        if (seed != this.seed || epoch != this.epoch || count != order.length) {
            order = draw(seed, epoch, count);
            this.seed = seed;
            this.epoch = epoch;
        }
        return order;
    }

    private int[] draw(long seed, long epoch, int count) {
        int[] o = new int[count];
        for (int i = 0; i < count; i++) {
            o[i] = i;
        }
        if (shuffle) {
            Random random = new Random(seed * 1_000_003L + epoch);
            for (int i = count - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = o[i];
                o[i] = o[j];
                o[j] = t;
            }
        }
        return o;
    }
}
