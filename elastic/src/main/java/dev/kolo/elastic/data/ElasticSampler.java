package dev.kolo.elastic.data;

import dev.kolo.elastic.ElasticSettings;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Setting;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Which samples each rank trains on, in a job whose size may change, so that every epoch trains every sample
 * exactly once: across lost workers, admitted ones and restarts from a checkpoint.
 *
 * <p>Each epoch visits the data set in one order, shuffled from the seed and the epoch (the same on every rank,
 * without a message). Each step the job takes the next global batch of that order, and rank r the r-th share of it
 * ({@link BatchSplit}). What the job has taken of the epoch is therefore always a prefix of the order, whatever the
 * sizes the job had: the sampler's position is just the epoch and the length of that prefix. Registered with an
 * {@link ElasticState} ({@link #register}), the position is committed and checkpointed with the model (with the
 * seed, so that a job restarted from a checkpoint keeps the order its epochs started with), so after a regroup to
 * any size the rest of the epoch is split among the ranks now present, and a restarted job resumes at the next
 * sample rather than at the epoch's start.
 *
 * <pre>{@code
 * ElasticSampler sampler = ElasticSampler.builder(kolo).batchSize(64).seed(42).build().register(state);
 * Elastic.run(kolo, state, s -> {
 *     while (sampler.epoch() < epochs) {
 *         for (Iterator<int[]> it = sampler.batches(data.size()); it.hasNext(); ) {
 *             int[] indices = it.next();       // this rank's batch: train on it
 *             optimizer.step(lr);              // every rank takes the step together
 *             sampler.stepped();               // the job has taken one more global batch
 *             if (step++ % 10 == 0) s.commit();
 *         }
 *     }
 *     return null;
 * });
 * }</pre>
 *
 * <p>Every rank gets the same number of batches per epoch. The last step of an epoch is completed by wrapping
 * around to the start of the order (as PyTorch's {@code DistributedSampler} pads), so every sample is trained at
 * least once and at most the last step repeats a few; with {@link Builder#dropLast} the samples that cannot fill a
 * step are left out of that epoch instead. The epoch advances when the job has stepped through it
 * ({@link #stepped}); a sampler whose batches are never stepped (a validation set's) advances at the end of each
 * full pass; {@link #setEpoch} sets it outright. Each call of {@link #batches} first checks with one small
 * collective that every rank has the same data set size, seed, settings and global batch.
 *
 * <p>{@linkplain Builder#partitioned Partitioned}, each rank holds a partition of the data set of its own (as
 * each task of a Spark stage does) and draws its batches from it alone: every epoch visits every sample of every
 * partition once, in an order shuffled from the seed and the epoch, and the position resumes within the
 * partitions. The job's size cannot change then (a partition cannot be shared among other ranks).
 *
 * <p>Stepped, it also watches the ranks' pace ({@link StragglerPolicy}, {@code KOLO_STRAGGLER}): by default it names a
 * rank slower than the others in the log and on the status page; with {@link StragglerPolicy#REBALANCE} it moves
 * batch share from slow ranks to fast ones, the global batch unchanged, so each rank's share ({@link #batchSize})
 * and {@link #gradientWeight} may change between steps (alike on every rank, and back to the split's at each new
 * generation); with {@link StragglerPolicy#EVICT} a much slower rank leaves an elastic job at its next commit.
 *
 * <p>Used by one training thread.
 */
public final class ElasticSampler {
    private final Kolo kolo;
    private final String name;
    private final BatchSplit split;
    private final boolean shuffle;
    private final boolean dropLast;
    private final boolean partitioned;
    private final EpochOrder orders;
    /** Null when the policy is {@link StragglerPolicy#OFF}. */
    private final PaceWatch pace;
    private final int maxBatch;
    /** {epoch, samples of it the job has taken, seed}: live, so that a restore or a sync rewrites it in place. */
    private final long[] position = new long[3];
    private int count = -1;
    /** The ranks' shares now: the split's, or the ones a rebalance chose in this generation. */
    private int[] sizes;
    private int sizesFor = -1;
    private long sizesGeneration = -1;
    /** The largest share each rank may take in a rebalance, for the split's {@link #sizes}. */
    private int[] caps;
    private int globalBatch;
    /** The job's size at the last {@link #batches} call: what {@link #globalBatch} was computed for. */
    private int batchesFor = -1;
    /** Partitioned: the job's size at the first {@link #batches} call, the only one it may have. */
    private int partitionedFor = -1;
    private boolean stepDriven;

    private ElasticSampler(Builder b) {
        this.kolo = b.kolo;
        this.name = b.name;
        this.split = b.split;
        this.shuffle = b.shuffle;
        this.dropLast = b.dropLast;
        this.partitioned = b.partitioned;
        this.position[2] = b.seed;
        this.orders = new EpochOrder(b.shuffle);
        this.maxBatch = b.maxBatch;
        StragglerPolicy policy = b.straggler != null ? b.straggler : setting(ElasticSettings.STRAGGLER);
        this.pace = policy == StragglerPolicy.OFF ? null : new PaceWatch(kolo, name, policy,
                setting(ElasticSettings.STRAGGLER_RATIO),
                b.paceWindow > 0 ? b.paceWindow : setting(ElasticSettings.STRAGGLER_WINDOW),
                setting(ElasticSettings.STRAGGLER_EVICT_RATIO));
    }

    private static <T> T setting(Setting<T> setting) {
        return setting.fromEnvironment().orElse(setting.defaultValue());
    }

    /** @return a builder for the sampler of this worker's job ({@code kolo}) */
    public static Builder builder(Kolo kolo) {
        return new Builder(Objects.requireNonNull(kolo, "kolo"));
    }

    /**
     * Registers the position (the epoch, the samples of it taken, and the seed of the shuffles) with {@code state}
     * under {@code <name>.position}, so that commits and checkpoints hold it and a restore or a sync sets it.
     *
     * @return this sampler
     */
    public ElasticSampler register(ElasticState state) {
        state.longs(name + ".position", position, 3);
        if (pace != null) {
            pace.register(state);
        }
        return this;
    }

    /**
     * Starts (or continues) the current epoch for this rank: the batches this rank takes from the job's position to
     * the end of the epoch, at the job's current size and this worker's current rank. Every rank calls it at the
     * same point: it runs one small collective to check that the ranks agree.
     *
     * @param datasetSize the number of samples, indices {@code 0 .. datasetSize - 1}; {@linkplain
     *     Builder#partitioned partitioned}, the number in all partitions together, each rank's partition holding
     *     {@code datasetSize / size} of them, indexed {@code 0 ..} within it
     * @return this rank's batches of sample indices, one per step, each a new array
     * @throws IllegalArgumentException on every rank if the data set is empty, too large, smaller than the job, or
     *     (with drop-last) smaller than one global batch, or if the ranks disagree on the data set's size, the seed,
     *     the settings or the global batch
     * @throws dev.kolo.runtime.KoloException if the check's collective fails (a lost worker)
     */
    public Iterator<int[]> batches(long datasetSize) {
        int size = kolo.size();
        if (datasetSize < size || datasetSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("sampler '" + name + "': a data set of " + datasetSize
                    + " samples cannot be shared by " + size + " ranks: " + (datasetSize < size
                    ? "every rank needs at least one sample, so use a larger data set or fewer workers"
                    : "an ElasticSampler indexes at most " + Integer.MAX_VALUE + " samples; split the data set"));
        }
        int[] s = sizesAt(size);
        int g = 0;
        for (int b : s) {
            g += b;
        }
        if (dropLast && datasetSize < g) {
            throw new IllegalArgumentException("sampler '" + name + "': with drop-last a data set of " + datasetSize
                    + " samples leaves no step of " + g + " (the global batch at " + size + " ranks): use a smaller "
                    + "batch, or pad the last step instead of dropping it");
        }
        if (partitioned) {
            requirePartitions(datasetSize, size, s);
        }
        SamplerAgreement.check(kolo, name, datasetSize, position[2], shuffle, dropLast, g);
        this.count = (int) datasetSize;
        this.globalBatch = g;
        this.batchesFor = size;
        if (pace != null) {
            pace.enter();
        }
        return new RankBatches(position[0], position[1]);
    }

    /**
     * Records that the job has taken one more step, one global batch of the epoch: call it on every rank after
     * each optimizer step of the batches from {@link #batches}. At the end of the epoch the position moves to the
     * start of the next.
     *
     * @throws IllegalStateException before any {@link #batches} call, or if the job changed size since the last one
     */
    public void stepped() {
        if (batchesFor != kolo.size()) {
            throw new IllegalStateException("sampler '" + name + "': stepped() needs the batches of the job as it "
                    + "is now: call batches(datasetSize) first (again after the job changed size)");
        }
        stepDriven = true;
        if (pace != null) {
            // In a generation that started since the last batches() call the shares are the split's again.
            int[] next = pace.stepped(sizesAt(kolo.size()), partitioned ? null : caps);
            if (next != null) {
                sizes = next;
            }
        }
        position[1] += globalBatch;
        if (!stepFits(position[1])) {
            position[0]++;
            position[1] = 0;
        }
    }

    /** @return the current epoch, from 0 */
    public long epoch() {
        return position[0];
    }

    /** @return how many samples of the current epoch the job has taken (all ranks' steps together) */
    public long samplesTaken() {
        return position[1];
    }

    /** Starts epoch {@code epoch} at its first sample (for a loop that counts epochs itself). */
    public void setEpoch(long epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must be >= 0 (got " + epoch + ")");
        }
        position[0] = epoch;
        position[1] = 0;
    }

    /** Sets the position as a restore from a commit does (for the tests of what follows one). */
    void seek(long epoch, long taken) {
        position[0] = epoch;
        position[1] = taken;
    }

    /** @return this rank's batch size at the job's current size */
    public int batchSize() {
        return sizesAt(kolo.size())[kolo.rank()];
    }

    /** @return the job's batch per step at its current size: the sum of the ranks' batch sizes */
    public int globalBatchSize() {
        int g = 0;
        for (int b : sizesAt(kolo.size())) {
            g += b;
        }
        return g;
    }

    /**
     * @return this rank's share of the global batch relative to an equal share, {@code batchSize * size / global}:
     *     1 when every rank takes the same. Multiplying each rank's mean gradient by it before averaging over the
     *     ranks gives the mean gradient of the global batch when the shares are unequal.
     */
    public double gradientWeight() {
        return (double) batchSize() * kolo.size() / globalBatchSize();
    }

    /** @return the steps of a whole epoch over {@code datasetSize} samples at the job's current size */
    public long stepsPerEpoch(long datasetSize) {
        long g = globalBatchSize();
        return dropLast ? datasetSize / g : (datasetSize + g - 1) / g;
    }

    /** @return the seed of the shuffles: the builder's, or the one a restore brought back with the position */
    public long seed() {
        return position[2];
    }

    /** @return the name its position is registered and checked under */
    public String name() {
        return name;
    }

    /** @return every rank's share of a step now, rank 0's first (a rebalance may change them between steps) */
    public int[] batchSizes() {
        return sizesAt(kolo.size()).clone();
    }

    /** The largest share each rank may take in a rebalance: the builder's bound, else twice the split's share. */
    private int[] capsFor(int[] base) {
        int[] caps = new int[base.length];
        for (int r = 0; r < base.length; r++) {
            caps[r] = maxBatch > 0 ? Math.max(maxBatch, base[r]) : 2 * base[r];
        }
        return caps;
    }

    private int[] sizesAt(int size) {
        if (sizesFor != size || sizesGeneration != kolo.generation()) {
            int[] s = split.sizes(size);
            if (s == null || s.length != size) {
                throw new IllegalArgumentException("sampler '" + name + "': the batch split gave "
                        + (s == null ? "nothing" : s.length + " sizes") + " for a job of " + size
                        + " ranks: a BatchSplit gives one batch size per rank");
            }
            for (int b : s) {
                if (b < 1) {
                    throw new IllegalArgumentException("sampler '" + name + "': the batch split gave a batch of "
                            + b + " at " + size + " ranks: every rank needs at least 1 sample a step");
                }
            }
            sizes = s.clone();
            caps = capsFor(s); // once a generation: stepped() allocates nothing
            sizesFor = size;
            sizesGeneration = kolo.generation();
        }
        return sizes;
    }

    private void requirePartitions(long datasetSize, int size, int[] s) {
        if (partitionedFor != -1 && partitionedFor != size) {
            throw new IllegalArgumentException("sampler '" + name + "': partitioned over " + partitionedFor
                    + " ranks, the job now has " + size + ": a partition cannot be shared among other ranks, so a "
                    + "partitioned sampler serves fixed jobs only");
        }
        if (datasetSize % size != 0) {
            throw new IllegalArgumentException("sampler '" + name + "': partitioned, " + datasetSize
                    + " samples are not " + size + " equal partitions: pass the size of the smallest partition "
                    + "times the ranks, and let each rank use that many of its samples");
        }
        for (int b : s) {
            if (b != s[0]) {
                throw new IllegalArgumentException("sampler '" + name + "': partitioned, every rank takes the same "
                        + "batch from its partition; the split gives " + java.util.Arrays.toString(s));
            }
        }
        partitionedFor = size;
    }

    /** @return whether a step starting at {@code taken} belongs to the epoch */
    private boolean stepFits(long taken) {
        long left = count - taken;
        return dropLast ? left >= globalBatch : left > 0;
    }

    /** This rank's batches from one position to the end of its epoch. */
    private final class RankBatches implements Iterator<int[]> {
        private final long epoch;
        private long cursor;
        private boolean passCounted;

        RankBatches(long epoch, long cursor) {
            this.epoch = epoch;
            this.cursor = cursor;
        }

        @Override
        public boolean hasNext() {
            if (stepFits(cursor)) {
                return true;
            }
            // A pass nobody stepped through (a validation set's) moves its sampler to the next epoch by itself.
            if (!passCounted && !stepDriven && position[0] == epoch) {
                setEpoch(epoch + 1);
            }
            passCounted = true;
            return false;
        }

        @Override
        public int[] next() {
            if (!hasNext()) {
                throw new NoSuchElementException("sampler '" + name + "': epoch " + epoch + " has no more steps");
            }
            int rank = kolo.rank();
            int[] shares = sizes; // this step's: a rebalance at the last step may have changed them
            int batch = shares[rank];
            int offset = 0;
            for (int r = 0; r < rank; r++) {
                offset += shares[r];
            }
            int[] indices = new int[batch];
            if (partitioned) {
                // The job's steps so far took this many of every partition's samples.
                int partition = count / partitionedFor;
                int[] order = orders.of(position[2], epoch, partition);
                long first = cursor / globalBatch * batch;
                for (int i = 0; i < batch; i++) {
                    indices[i] = order[(int) ((first + i) % partition)];
                }
            } else {
                int[] order = orders.of(position[2], epoch, count);
                long first = cursor + offset;
                for (int i = 0; i < batch; i++) {
                    indices[i] = order[(int) ((first + i) % count)]; // past the end only to pad the last step
                }
            }
            cursor += globalBatch;
            return indices;
        }
    }

    /** Builds an {@link ElasticSampler}. */
    public static final class Builder {
        private final Kolo kolo;
        private String name = "sampler";
        private BatchSplit split;
        private boolean shuffle = true;
        private boolean dropLast;
        private boolean partitioned;
        private long seed;
        private StragglerPolicy straggler;
        private int maxBatch;
        private int paceWindow;

        private Builder(Kolo kolo) {
            this.kolo = kolo;
        }

        /** @param perRank the samples every rank takes a step (required, or {@link #split}) */
        public Builder batchSize(int perRank) {
            this.split = BatchSplit.equal(perRank);
            return this;
        }

        /** @param split how a step's global batch is shared among the ranks, for each size of the job */
        public Builder split(BatchSplit split) {
            this.split = Objects.requireNonNull(split, "split");
            return this;
        }

        /** @param on shuffle each epoch (default true); off visits the data set in its own order every epoch */
        public Builder shuffle(boolean on) {
            this.shuffle = on;
            return this;
        }

        /**
         * @param seed the seed of the shuffles, the same on every rank (default 0); a restore from a commit or a
         *     checkpoint brings back the seed the job started with
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * @param on leave out of each epoch the samples that cannot fill a last step (default false: the last
         *     step is filled from the start of the epoch's order)
         */
        public Builder dropLast(boolean on) {
            this.dropLast = on;
            return this;
        }

        /**
         * @param on each rank holds a partition of the data set of its own and draws from it alone (default false:
         *     every rank holds the whole data set and the ranks share each epoch's order); for fixed jobs, with
         *     every rank taking the same batch
         */
        public Builder partitioned(boolean on) {
            this.partitioned = on;
            return this;
        }

        /**
         * @param policy what the job does about a rank slower than the others (default {@code KOLO_STRAGGLER}'s,
         *     {@link StragglerPolicy#WARN} when unset); every rank must give the same
         */
        public Builder straggler(StragglerPolicy policy) {
            this.straggler = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Steps between the ranks' comparisons, instead of {@code KOLO_STRAGGLER_WINDOW}'s (for short tests). */
        Builder paceWindow(int steps) {
            this.paceWindow = steps;
            return this;
        }

        /**
         * @param most the largest batch a rebalance may give a rank (default twice its share in the split): the
         *     size its buffers were made for
         */
        public Builder maxBatchSize(int most) {
            if (most < 1) {
                throw new IllegalArgumentException("the largest batch must be at least 1 (got " + most + ")");
            }
            this.maxBatch = most;
            return this;
        }

        /**
         * @param name the name its position is registered under ({@code <name>.position}) and its check runs as;
         *     default {@code sampler}. Two samplers registered with one state need two names.
         */
        public Builder name(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a sampler's name must not be empty");
            }
            this.name = name;
            return this;
        }

        /** @throws IllegalStateException if neither a batch size nor a split was given */
        public ElasticSampler build() {
            if (split == null) {
                throw new IllegalStateException("sampler '" + name + "': give each rank's batch size (batchSize(n)) "
                        + "or a split of the global batch (split(BatchSplit.global(n)))");
            }
            return new ElasticSampler(this);
        }
    }
}
