package dev.kolo.elastic.data;

import java.util.Arrays;

/**
 * How one step's global batch is shared among the ranks: for a job of {@code size} ranks, the number of samples
 * each rank takes, in rank order. Every rank of a job must use the same split (an {@link ElasticSampler} checks the
 * global batch at the start of each epoch and after each regroup). Unequal shares let workers of unequal speed
 * finish a step together; {@link #global} keeps the global batch, and so the learning dynamics, the same when an
 * elastic job changes size.
 */
@FunctionalInterface
public interface BatchSplit {
    /**
     * @param size the number of ranks in the job now
     * @return {@code size} batch sizes, each at least 1, rank 0's first
     */
    int[] sizes(int size);

    /** @return every rank takes {@code perRank} samples a step (the global batch grows with the job) */
    static BatchSplit equal(int perRank) {
        checkAtLeastOne("batch size", perRank);
        return size -> {
            int[] sizes = new int[size];
            Arrays.fill(sizes, perRank);
            return sizes;
        };
    }

    /**
     * @return the job takes {@code globalBatch} samples a step whatever its size: each rank
     *     {@code globalBatch / size}, the first {@code globalBatch % size} ranks one more
     */
    static BatchSplit global(int globalBatch) {
        checkAtLeastOne("global batch size", globalBatch);
        return size -> {
            if (globalBatch < size) {
                throw new IllegalArgumentException("a global batch of " + globalBatch + " cannot give each of "
                        + size + " ranks a sample: make the global batch at least " + size);
            }
            int[] sizes = new int[size];
            for (int r = 0; r < size; r++) {
                sizes[r] = globalBatch / size + (r < globalBatch % size ? 1 : 0);
            }
            return sizes;
        };
    }

    /**
     * @return rank r takes {@code perRank[r]} samples a step; only for a job of exactly {@code perRank.length}
     *     ranks (an elastic job needs {@link #global} or a split of its own for each size)
     */
    static BatchSplit fixed(int... perRank) {
        int[] sizes = perRank.clone();
        if (sizes.length == 0) {
            throw new IllegalArgumentException("give at least one rank's batch size");
        }
        for (int s : sizes) {
            checkAtLeastOne("batch size", s);
        }
        return size -> {
            if (size != sizes.length) {
                throw new IllegalArgumentException("the batch sizes " + Arrays.toString(sizes) + " are for "
                        + sizes.length + " ranks but the job has " + size + ": give one size per rank, or a split "
                        + "for every size the job can have (BatchSplit.global(n), or a BatchSplit of your own)");
            }
            return sizes.clone();
        };
    }

    private static void checkAtLeastOne(String what, int n) {
        if (n < 1) {
            throw new IllegalArgumentException("the " + what + " must be at least 1 (got " + n + ")");
        }
    }
}
