package dev.kolo.samples.mnist;

import java.util.Random;

/**
 * Which training examples each rank sees: every epoch the whole set is shuffled from a seed all ranks share
 * (so they agree on the permutation without talking), and rank r takes the r-th of {@code size} equal
 * shards. The few examples left over by the division sit out that epoch, so every rank runs the same
 * number of steps.
 */
final class ShardSampler {
    private final int count;
    private final int rank;
    private final int size;
    private final long seed;
    private final int[] order;

    ShardSampler(int count, int rank, int size, long seed) {
        if (count < size) {
            throw new IllegalArgumentException(count + " examples cannot be shared by " + size + " ranks");
        }
        this.count = count;
        this.rank = rank;
        this.size = size;
        this.seed = seed;
        this.order = new int[count];
    }

    /** @return examples per rank per epoch */
    int shardSize() {
        return count / size;
    }

    /**
     * Shuffles for {@code epoch}; this rank's examples are then {@code order()[offset() .. offset()+shardSize())}.
     */
    void shuffle(int epoch) {
        for (int i = 0; i < count; i++) {
            order[i] = i;
        }
        Random random = new Random(seed * 1_000_003L + epoch);
        for (int i = count - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }

    /** @return the current epoch's permutation of all examples (not a copy) */
    int[] order() {
        return order;
    }

    /** @return where this rank's shard starts in {@link #order()} */
    int offset() {
        return rank * shardSize();
    }
}
