package dev.kolo.djl;

import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;
import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.data.BatchSplit;
import dev.kolo.elastic.data.ElasticSampler;
import dev.kolo.elastic.data.StragglerPolicy;
import dev.kolo.runtime.Kolo;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A DJL {@link Sampler} that gives each rank of a Kolo job its share of every epoch, as PyTorch's
 * {@code DistributedSampler} does, and resumes an epoch at the exact sample after a lost worker, an admitted one
 * or a restart from a checkpoint. Set it on any {@link RandomAccessDataset} through its builder's
 * {@code setSampling(sampler)}; {@code EasyTrain.fit} and {@code trainer.iterateDataset} then need nothing else:
 *
 * <pre>{@code
 * DistributedSampler sampler = new DistributedSampler(kolo, 64, true, 42);  // 64 samples per rank per step
 * RandomAccessDataset train = new ArrayDataset.Builder().setData(x).optLabels(y).setSampling(sampler).build();
 * }</pre>
 *
 * <p>Every rank gets the same number of batches per epoch; the ranks' batches are disjoint and together the
 * whole data set, the last step filled from the start of the epoch's order (or, with
 * {@link Builder#dropLast}, the samples that cannot fill it left out). Each epoch is shuffled anew from the seed
 * and the epoch, alike on every rank without a message.
 *
 * <p>Its position (the epoch, and the samples of it the job has taken) advances with the steps of the
 * {@link KoloTrainer} it is registered with ({@link KoloTrainer#register(ElasticState, DistributedSampler)}),
 * which also commits it with the model: after a regroup to any size the rest of the epoch is split among the ranks
 * present, so that over the epoch every sample is trained once. A sampler no trainer steps (a validation set's)
 * moves to its next epoch at the end of each pass. This is the framework-free {@link ElasticSampler} seen through
 * DJL's interface; see there for the details. Used by one training thread.
 */
public final class DistributedSampler implements Sampler {
    private final ElasticSampler sampler;

    /**
     * @param kolo      this worker's handle on the job
     * @param batchSize the samples each rank takes per step (at least 1)
     * @param shuffle   shuffle each epoch (a training set); false visits the data set in its own order
     * @param seed      the seed of the shuffles, the same on every rank
     */
    public DistributedSampler(Kolo kolo, int batchSize, boolean shuffle, long seed) {
        this(ElasticSampler.builder(kolo).batchSize(batchSize).shuffle(shuffle).seed(seed).build());
    }

    private DistributedSampler(ElasticSampler sampler) {
        this.sampler = sampler;
    }

    /** @return a builder for a sampler with more choices: unequal batches, drop-last, a name */
    public static Builder builder(Kolo kolo) {
        return new Builder(kolo);
    }

    /**
     * Starts (or continues) the current epoch: this rank's batches from the job's position to the epoch's end. DJL
     * calls it when a data set is iterated; every rank must iterate at the same point (it checks, with one small
     * collective, that the ranks agree on the data set's size, the seed, the settings and the global batch).
     *
     * @throws IllegalArgumentException on every rank if they disagree, or the data set is smaller than the job
     */
    @Override
    public Iterator<List<Long>> sample(RandomAccessDataset dataset) {
        Iterator<int[]> batches = sampler.batches(dataset.size());
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return batches.hasNext();
            }

            @Override
            public List<Long> next() {
                int[] indices = batches.next();
                List<Long> out = new ArrayList<>(indices.length);
                for (int i : indices) {
                    out.add((long) i);
                }
                return out;
            }
        };
    }

    /** @return this rank's batch size at the job's current size */
    @Override
    public int getBatchSize() {
        return sampler.batchSize();
    }

    /** @return the current epoch, from 0 */
    public long epoch() {
        return sampler.epoch();
    }

    /** @return how many samples of the current epoch the job has taken */
    public long samplesTaken() {
        return sampler.samplesTaken();
    }

    /** Starts epoch {@code epoch} at its first sample (for a loop that counts epochs itself, as PyTorch's). */
    public void setEpoch(long epoch) {
        sampler.setEpoch(epoch);
    }

    /** @return the framework-free sampler underneath (position, batch sizes, steps per epoch) */
    public ElasticSampler positions() {
        return sampler;
    }

    /** Builds a {@link DistributedSampler}. */
    public static final class Builder {
        private final ElasticSampler.Builder b;

        private Builder(Kolo kolo) {
            this.b = ElasticSampler.builder(kolo);
        }

        /** @param perRank the samples each rank takes per step (or {@link #split}) */
        public Builder batchSize(int perRank) {
            b.batchSize(perRank);
            return this;
        }

        /**
         * @param split how a step's global batch is shared among the ranks, e.g. {@code BatchSplit.global(256)} (the
         *     same global batch at any size) or {@code BatchSplit.fixed(96, 64, 96)}; a {@link KoloTrainer} weighs
         *     each rank's gradient by its share
         */
        public Builder split(BatchSplit split) {
            b.split(split);
            return this;
        }

        /** @param on shuffle each epoch (default true) */
        public Builder shuffle(boolean on) {
            b.shuffle(on);
            return this;
        }

        /** @param seed the seed of the shuffles, the same on every rank (default 0) */
        public Builder seed(long seed) {
            b.seed(seed);
            return this;
        }

        /** @param on leave out the samples that cannot fill a last step (default false: fill it from the start) */
        public Builder dropLast(boolean on) {
            b.dropLast(on);
            return this;
        }

        /**
         * @param policy what the job does about a rank slower than the others (default {@code KOLO_STRAGGLER}'s):
         *     with {@link StragglerPolicy#REBALANCE} the ranks' shares follow their speeds, and a {@link KoloTrainer}
         *     weighs each rank's gradient by its share every step
         */
        public Builder straggler(StragglerPolicy policy) {
            b.straggler(policy);
            return this;
        }

        /** @param name what its position is committed under ({@code <name>.position}; default {@code sampler}) */
        public Builder name(String name) {
            b.name(name);
            return this;
        }

        /** @throws IllegalStateException if neither a batch size nor a split was given */
        public DistributedSampler build() {
            return new DistributedSampler(b.build());
        }
    }
}
