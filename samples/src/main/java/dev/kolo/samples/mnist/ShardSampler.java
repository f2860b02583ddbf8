package dev.kolo.samples.mnist;

import java.util.Random;

/**
 * Which training examples each rank sees: every epoch the whole set is shuffled from a seed all ranks share
 * (so they agree on the permutation without talking), and each optimizer step takes the next
 * {@code size x batch x passes} examples of it, rank r the r-th batch of each pass. What an epoch has used
 * so far is thus always a prefix of the permutation, whatever the number of workers was: the loop keeps
 * only its position in it, and an elastic job that changes size mid-epoch continues from there with the
 * new ranks, never repeating or skipping an example. The few examples left at the end of an epoch (fewer
 * than a global batch) sit it out.
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

    /** Shuffles for {@code epoch} (0-based): the same permutation on every rank. */
    void shuffle(long epoch) {
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

    /**
     * @param position examples of this epoch's permutation used by the steps before this one
     * @param pass which backward pass of the step
     * @return where this rank's batch of {@code batch} examples starts in {@link #order()}
     */
    int batchStart(long position, int pass, int batch) {
        return (int) (position + ((long) pass * size + rank) * batch);
    }
}
