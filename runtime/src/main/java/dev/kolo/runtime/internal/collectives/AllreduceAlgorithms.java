package dev.kolo.runtime.internal.collectives;


import dev.kolo.runtime.Settings;

/**
 * Which allreduce algorithm a buffer takes, by its size and the job's: the table of thresholds (as MPI's tuned
 * collectives and NCCL choose), one place where measurements, or a tuner, set them. Immutable.
 *
 * <ul>
 *   <li>{@link Choice#DIRECT}: every rank sends its vector to every peer, one hop; for tiny buffers on few ranks.
 *   <li>{@link Choice#RECURSIVE_DOUBLING}: {@code log2 n} whole-vector exchanges; small buffers.
 *   <li>{@link Choice#RABENSEIFNER}: recursive-halving reduce-scatter and recursive-doubling allgather,
 *       {@code 2 log2 n} steps with the ring's bytes; medium buffers.
 *   <li>{@link Choice#RING}: {@code 2(n-1)} pipelined steps between neighbours; large buffers, and every size
 *       above the direct exchange at 2 ranks, where the ring already is Rabenseifner's two steps.
 * </ul>
 */
public final class AllreduceAlgorithms {
    /** The allreduce algorithms of the data plane, as this table names its choice (the algorithms are the generation's table's). */
    public enum Choice {
        DIRECT, RECURSIVE_DOUBLING, RABENSEIFNER, RING
    }

    /** Largest buffer of the direct exchange: far below the socket buffers, so posting every send first cannot block. */
    public static final int DIRECT_MAX_BYTES = 8 * 1024;
    /** Most ranks the direct exchange serves: beyond, its n-1 sends per rank cost more than log2 n steps. */
    public static final int DIRECT_MAX_RANKS = 4;
    /** Largest buffer recursive doubling takes by default ({@code KOLO_RECURSIVE_DOUBLING_MAX_BYTES}): above, sending the whole vector log2 n times costs more. */
    public static final int RECURSIVE_DOUBLING_MAX_BYTES = Settings.RECURSIVE_DOUBLING_MAX_BYTES.defaultValue();
    /** Largest buffer Rabenseifner's algorithm takes by default ({@code KOLO_RABENSEIFNER_MAX_BYTES}): above, the ring's pipeline between neighbours wins. */
    public static final long RABENSEIFNER_MAX_BYTES = Settings.RABENSEIFNER_MAX_BYTES.defaultValue();

    private static final AllreduceAlgorithms DEFAULTS = new AllreduceAlgorithms(DIRECT_MAX_BYTES, DIRECT_MAX_RANKS,
            RECURSIVE_DOUBLING_MAX_BYTES, RABENSEIFNER_MAX_BYTES);

    private final int directMaxBytes;
    private final int directMaxRanks;
    private final int recursiveDoublingMaxBytes;
    private final long rabenseifnerMaxBytes;

    private AllreduceAlgorithms(int directMaxBytes, int directMaxRanks, int recursiveDoublingMaxBytes,
            long rabenseifnerMaxBytes) {
        if (directMaxBytes < 0 || directMaxBytes > DIRECT_MAX_BYTES) {
            throw new IllegalArgumentException("the direct exchange takes at most " + DIRECT_MAX_BYTES + " bytes: "
                    + directMaxBytes);
        }
        if (recursiveDoublingMaxBytes < 0 || rabenseifnerMaxBytes < 0) {
            throw new IllegalArgumentException("negative threshold: " + recursiveDoublingMaxBytes + ", "
                    + rabenseifnerMaxBytes);
        }
        this.directMaxBytes = directMaxBytes;
        this.directMaxRanks = directMaxRanks;
        this.recursiveDoublingMaxBytes = recursiveDoublingMaxBytes;
        this.rabenseifnerMaxBytes = rabenseifnerMaxBytes;
    }

    /** @return the thresholds measured for loopback and LAN (docs/PERFORMANCE.md) */
    public static AllreduceAlgorithms defaults() {
        return DEFAULTS;
    }

    /**
     * @param directMaxBytes largest direct exchange (at most {@link #DIRECT_MAX_BYTES}; 0 turns it off)
     * @param directMaxRanks most ranks of a direct exchange (2 and more ranks beyond it take the others)
     * @param recursiveDoublingMaxBytes largest recursive doubling (its scratch buffer; 0 turns it off)
     * @param rabenseifnerMaxBytes largest Rabenseifner allreduce (0 turns it off: the ring takes the rest)
     */
    public static AllreduceAlgorithms of(int directMaxBytes, int directMaxRanks, int recursiveDoublingMaxBytes,
            long rabenseifnerMaxBytes) {
        return new AllreduceAlgorithms(directMaxBytes, directMaxRanks, recursiveDoublingMaxBytes,
                rabenseifnerMaxBytes);
    }

    /**
     * @param bytes the buffer's length
     * @param size ranks in the job (2 or more)
     * @param contiguous whether the buffer is one buffer (recursive doubling and the direct exchange need one;
     *        a fused batch of tensors' own buffers takes the other two)
     */
    public Choice choose(long bytes, int size, boolean contiguous) {
        if (contiguous && bytes <= directMaxBytes && (size == 2 || size <= directMaxRanks)) {
            return Choice.DIRECT;
        }
        if (size == 2) {
            return Choice.RING;
        }
        if (contiguous && bytes <= recursiveDoublingMaxBytes) {
            return Choice.RECURSIVE_DOUBLING;
        }
        return bytes <= rabenseifnerMaxBytes ? Choice.RABENSEIFNER : Choice.RING;
    }

    /**
     * Allgather follows the same table: recursive doubling ({@code log2 n} steps, the ring's bytes on a power of
     * two) up to Rabenseifner's bound on 3 or more ranks, the ring above and at 2 ranks.
     *
     * @param totalBytes the gathered buffer's length
     */
    public boolean allgatherByRecursiveDoubling(long totalBytes, int size) {
        return size > 2 && totalBytes <= rabenseifnerMaxBytes;
    }

    /**
     * Broadcast too: a binomial tree ({@code ceil(log2 n)} whole-buffer steps) up to the recursive-doubling bound
     * on 3 or more ranks, the pipelined chain above (one buffer plus n-2 chunks) and at 2 ranks.
     */
    public boolean broadcastByBinomialTree(long bytes, int size) {
        return size > 2 && bytes <= recursiveDoublingMaxBytes;
    }

    /**
     * @return the largest allreduce that stays flat when the job's hosts hold several ranks: up to the sizes whose few
     *         whole-buffer messages (the direct exchange, recursive doubling) cost less than a hierarchy's three phases
     */
    public long flatMaxBytes() {
        return Math.max(recursiveDoublingMaxBytes, directMaxBytes);
    }

    /** @return the largest buffer recursive doubling takes (the scratch it needs) */
    public int recursiveDoublingMaxBytes() {
        return recursiveDoublingMaxBytes;
    }

    @Override
    public String toString() {
        return "direct <= " + directMaxBytes + " B at <= " + directMaxRanks + " ranks, recursive doubling <= "
                + recursiveDoublingMaxBytes + " B, Rabenseifner <= " + rabenseifnerMaxBytes + " B, ring above";
    }
}
