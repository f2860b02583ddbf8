package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.translate.TranslateException;
import ai.djl.util.Pair;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DJL {@link Trainer} whose {@link #step()} first averages every gradient over the ranks of a Kolo job: DJL's
 * own training flow, distributed. Build it in place of {@code model.newTrainer(config)} and keep everything
 * else: any DJL {@code Optimizer}, loss, evaluators and listeners in the {@link TrainingConfig},
 * {@code EasyTrain.fit(trainer, epochs, trainShard, validation)} or a loop of your own with
 * {@code trainer.step()}.
 *
 * <pre>{@code
 * try (Kolo kolo = Kolo.init();
 *      KoloTrainer trainer = new KoloTrainer(kolo, model, config)) {   // instead of model.newTrainer(config)
 *     trainer.initialize(inputShape);         // in a fixed job, also makes every rank start from rank 0's model
 *     EasyTrain.fit(trainer, epochs, trainingSet, validationSet);     // each set sampled by a DistributedSampler
 * }
 * }</pre>
 *
 * <p>Elastic and exactly resumable: register the trainer with an {@link ElasticState} and the training set's
 * {@link DistributedSampler}, and train under {@link dev.kolo.elastic.Elastic#run} with {@link #fit}, which
 * continues from the committed epoch and sample:
 *
 * <pre>{@code
 * trainer.register(state, sampler);                 // model, buffers, KoloOptimizer's state, position, steps
 * Elastic.runOrExit(kolo, state, s -> {
 *     trainer.fit(epochs, trainingSet, validationSet);   // commits every commitEvery steps (default 10)
 *     return null;
 * });
 * }</pre>
 *
 * <p>Why a {@code Trainer} subclass: {@code Trainer.step()} is the one call through which every DJL training
 * flow updates the model (EasyTrain, user loops, listeners that read the trainer), and the averaged gradients
 * must be in place before the optimizer reads them. A listener runs too early or too late for that, and DJL
 * builds its parameter server inside the trainer, where it cannot be replaced.
 *
 * <p>What a step does: every trained parameter's gradient and every buffer (parameters without a gradient, such
 * as BatchNorm's running mean and variance) is averaged over the ranks, in the engine's own memory where the
 * engine gives a view of it (PyTorch on CPU does; nothing is copied), gradients last layer first so that the
 * runtime fuses them into few ring operations; then DJL's optimizer updates the model as in one process. The
 * ranks therefore stay bitwise equal, and with equal shards a step equals one process's step over the global
 * batch (the mean of the ranks' mean gradients is the global batch's mean gradient). Buffers averaged every step
 * are the running statistics of the global batch's mean (the variance is the mean of the ranks' variances);
 * no rank's statistics drift from the others'.
 *
 * <p>Listeners: those that write files or log ({@code SaveModelTrainingListener}, {@code LoggingTrainingListener},
 * {@code TimeMeasureTrainingListener}, {@code MemoryTrainingListener}, and any you wrap in {@link #onRankZero})
 * run on rank 0 only; all others run on every rank. Evaluations are each rank's own: give every rank the whole
 * validation set for equal figures, or average them with {@link #average}.
 *
 * <p>Optimizer state: DJL's optimizers keep their state (momentum, Adam's moments) private, so an elastic commit
 * or a checkpoint cannot hold it: after a restore it starts again from zero. {@link KoloOptimizer} (SGD with
 * momentum, Adam, AdamW, LAMB) keeps it where {@link #register} commits it, so a restored job continues exactly.
 *
 * <p>Every rank must build the same model and call {@code step()} the same number of times (a
 * {@link DistributedSampler} gives every rank as many batches). One training thread.
 */
public class KoloTrainer extends Trainer {
    private static final Logger LOG = LoggerFactory.getLogger(KoloTrainer.class);
    /** Steps between commits of a registered state unless {@link #commitEvery} says otherwise. */
    public static final int DEFAULT_COMMIT_EVERY = 10;

    private final Kolo kolo;
    private final BatchSamples samples;
    private final ai.djl.training.optimizer.Optimizer optimizer;
    /** Steps taken: live, so that a restore or a sync of a registered state sets it. */
    private final long[] steps = new long[1];
    private ModelExchange exchange;
    private ReduceOp gradientOp = ReduceOp.AVERAGE;
    private ElasticState state;
    private DistributedSampler sampler;
    private int commitEvery = DEFAULT_COMMIT_EVERY;
    /** No listener accumulates the training loss (no evaluator listener in the config): nothing to show. */
    private boolean lossUnknown;

    /**
     * @param kolo   this worker's handle on the job
     * @param model  the model to train (its block initialized now or by {@link #initialize})
     * @param config DJL's training configuration, used as by {@code model.newTrainer(config)}
     */
    public KoloTrainer(Kolo kolo, Model model, TrainingConfig config) {
        this(kolo, model, config, new BatchSamples());
    }

    private KoloTrainer(Kolo kolo, Model model, TrainingConfig config, BatchSamples samples) {
        super(model, RankListeners.forRank(config, kolo.rank(), samples));
        this.kolo = kolo;
        this.samples = samples;
        this.optimizer = config.getOptimizer();
    }

    /** Counts the samples of the batches trained since the last step, for the status page's samples per second. */
    private static final class BatchSamples extends ai.djl.training.listener.TrainingListenerAdapter {
        long sinceStep;

        @Override
        public void onTrainingBatch(Trainer trainer, BatchData batchData) {
            sinceStep += batchData.getBatch().getSize();
        }
    }

    /**
     * Marks a listener to run on rank 0 only (one that writes files, sends reports, or logs): add the returned
     * listener to the {@code TrainingConfig} in place of the original.
     */
    public static TrainingListener onRankZero(TrainingListener listener) {
        return new RankZeroListener(listener);
    }

    /**
     * Initializes the model as DJL does, then, in a fixed job, gives every rank rank 0's parameters and buffers. In
     * an elastic job it broadcasts nothing (a worker admitted later would wait for the others in vain): there
     * {@link dev.kolo.elastic.Elastic#run}'s synchronization of the {@link #register registered} state does it.
     */
    @Override
    public void initialize(Shape... shapes) {
        super.initialize(shapes);
        if (!kolo.config().elastic()) {
            broadcastParameters(0);
        }
    }

    /**
     * Overwrites every parameter and buffer with rank {@code rootRank}'s values. {@link #initialize} calls it;
     * call it yourself after loading a model that not every rank loaded from the same file.
     */
    public void broadcastParameters(int rootRank) {
        exchange().broadcast(rootRank);
    }

    /**
     * Averages the gradients and buffers over all ranks, then updates the model with DJL's optimizer. With a
     * {@link #register registered} state, the step ends with {@link ElasticState#stepDone()}: a fixed job asked to
     * stop (SIGTERM on any rank: a preemption, a drain) stops after this step with it checkpointed, and
     * {@link dev.kolo.elastic.Elastic#runOrExit} exits with
     * {@value dev.kolo.elastic.ElasticJobFailedException#STOPPED_STATUS}; started again, the job resumes from it.
     *
     * @throws dev.kolo.runtime.KoloException if a collective fails (a lost worker, for instance)
     * @throws dev.kolo.elastic.ElasticJobFailedException on every rank when the fixed job stopped as asked
     */
    @Override
    public void step() {
        if (state == null && kolo.config().elastic()) {
            throw new IllegalStateException("in an elastic job register the trainer with an ElasticState "
                    + "(trainer.register(state, sampler)) and train under Elastic.run: its synchronization gives every "
                    + "rank, and every worker admitted later, the same model");
        }
        weighGradients();
        exchange().averageGradientsAndBuffers();
        super.step();
        steps[0]++;
        if (sampler != null) {
            sampler.positions().stepped();
        }
        kolo.reportStep(steps[0], samples.sinceStep); // the status page's step rate, samples/s and step times
        samples.sinceStep = 0;
        reportLoss();
        if (state != null) {
            // A fixed job asked to stop (SIGTERM on any rank) stops here, this step committed and checkpointed.
            state.stepDone();
            if (commitEvery > 0 && steps[0] % commitEvery == 0) {
                state.commit();
            }
        }
    }

    /**
     * Trains {@code epochs} epochs with DJL's {@code EasyTrain.fit}, continuing from where the registered sampler
     * is (the committed epoch and sample, after a restore, a regroup or a restart from a checkpoint), then commits
     * the registered state. Call it under {@link dev.kolo.elastic.Elastic#run}: after a lost worker or a change of
     * membership it is called again and goes on from the last commit. Without a registered sampler it is
     * {@code EasyTrain.fit(this, epochs, trainingSet, validationSet)}.
     *
     * @param validationSet evaluated after each epoch, or null
     * @throws UncheckedIOException if reading a batch fails
     * @throws IllegalStateException if preparing a batch fails (a {@link TranslateException})
     */
    public void fit(int epochs, Dataset trainingSet, Dataset validationSet) {
        long done = sampler == null ? 0 : sampler.epoch();
        try {
            if (done < epochs) {
                EasyTrain.fit(this, Math.toIntExact(epochs - done), trainingSet, validationSet);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the training data failed: " + e.getMessage(), e);
        } catch (TranslateException e) {
            throw new IllegalStateException("preparing a batch failed: " + e.getMessage(), e);
        }
        if (state != null && commitEvery > 0) {
            state.commit();
        }
    }

    /** @return the steps this trainer has taken (committed and restored with a registered state) */
    public long steps() {
        return steps[0];
    }

    /**
     * @param every commit the registered state after every {@code every}-th step (default
     *     {@value #DEFAULT_COMMIT_EVERY}); 0 never (commit yourself). What a lost worker's survivors roll back to,
     *     and where workers join or leave an elastic job.
     * @return this trainer
     */
    public KoloTrainer commitEvery(int every) {
        if (every < 0) {
            throw new IllegalArgumentException("commitEvery must be 0 (never) or more, got " + every);
        }
        this.commitEvery = every;
        return this;
    }

    /**
     * @return the mean of {@code value} over all ranks (a loss or an accuracy for logging and evaluation); every
     *     rank must call it with the same {@code name} at the same point
     */
    public double average(String name, double value) {
        return kolo.allreduce("metric." + name, Tensor.of(new double[] {value}), ReduceOp.AVERAGE)
                .toDoubleArray()[0];
    }

    /**
     * Registers with {@code state} everything the next step depends on, so that commits and checkpoints hold it and
     * a restore or a synchronization sets it: every parameter and buffer of the model (as the engine's own memory),
     * the state of a {@link KoloOptimizer} (DJL's own optimizers keep theirs private: a warning says so), the steps
     * taken, and the training set's sampler's position. From now on each step advances the sampler, and every
     * {@link #commitEvery} steps commits the state. Call it once, after {@link #initialize} and before training.
     *
     * @param trainingSampler the sampler of the training set (each step advances it), or null
     * @throws IllegalStateException if the engine hands out copies of its arrays rather than views (register
     *     a {@link DistributedTrainer} instead, which keeps copies of its own), or if already registered
     */
    public KoloTrainer register(ElasticState state, DistributedSampler trainingSampler) {
        if (this.state != null) {
            throw new IllegalStateException("the trainer is registered with a state already: register it once");
        }
        exchange().register(state, true);
        if (optimizer instanceof KoloOptimizer k) {
            List<KoloOptimizer.Trained> trained = new ArrayList<>();
            for (Pair<String, ai.djl.nn.Parameter> p : getModel().getBlock().getParameters()) {
                if (p.getValue().requiresGradient()) {
                    trained.add(new KoloOptimizer.Trained(p.getValue().getId(), p.getKey(), p.getValue().getArray()));
                }
            }
            k.register(state, trained);
        } else {
            LOG.warn("the optimizer {} keeps its state (momentum, moments) where no commit can hold it: after a "
                    + "restore it starts from zero; use a KoloOptimizer (dev.kolo.djl) for exact resumes",
                    optimizer.getClass().getSimpleName());
        }
        state.longs("kolo.trainer.steps", steps, 1);
        if (trainingSampler != null) {
            trainingSampler.positions().register(state);
        }
        this.state = state;
        this.sampler = trainingSampler;
        return this;
    }

    /** {@link #register(ElasticState, DistributedSampler)} for a loop that keeps its own position in the data. */
    public KoloTrainer register(ElasticState state) {
        return register(state, null);
    }

    /**
     * Sets how the ranks' gradients combine before DJL's optimizer reads them: {@link ReduceOp#AVERAGE} (the
     * default, one process's step over the global batch), {@link ReduceOp#SUM}, or {@link ReduceOp#ADASUM}
     * (adaptive summation, as Horovod's {@code op=hvd.Adasum}: more ranks without a new learning rate). Buffers
     * such as BatchNorm's statistics are averaged in every case. Every rank must set the same.
     *
     * @return this trainer
     */
    public KoloTrainer gradientReduceOp(ReduceOp op) {
        java.util.Objects.requireNonNull(op, "op");
        if (op != ReduceOp.AVERAGE && op != ReduceOp.SUM && op != ReduceOp.ADASUM) {
            throw new IllegalArgumentException("gradients combine by AVERAGE, SUM or ADASUM, not " + op);
        }
        this.gradientOp = op;
        if (exchange != null) {
            exchange.gradientOp(op);
        }
        return this;
    }

    /**
     * @return a checksum (hex) of every parameter and buffer of the model as the engine holds them, in the block's
     *     order: equal on every rank of a job whose ranks agree, for logs and checks
     */
    public String checksum() {
        long h = 1125899906842597L;
        for (Pair<String, ai.djl.nn.Parameter> p : getModel().getBlock().getParameters()) {
            for (float v : p.getValue().getArray().toFloatArray()) {
                h = 31 * h + Float.floatToRawIntBits(v);
            }
        }
        return Long.toHexString(h);
    }

    /** @return this worker's handle on the job */
    public Kolo kolo() {
        return kolo;
    }

    /** The epoch's running mean of the training loss, as DJL's evaluator listener keeps it: a curve on the status page. */
    private void reportLoss() {
        if (lossUnknown) {
            return;
        }
        try {
            kolo.reportScalar("loss", getLoss().getAccumulator(EvaluatorTrainingListener.TRAIN_PROGRESS));
        } catch (IllegalArgumentException e) {
            lossUnknown = true; // the config has no EvaluatorTrainingListener (TrainingListener.Defaults add one)
        }
    }

    /**
     * With unequal batch shares (a {@link DistributedSampler}'s split), each rank's mean gradient counts by its share
     * of the global batch, so that their average is the global batch's mean gradient.
     */
    private void weighGradients() {
        double weight = sampler == null ? 1 : sampler.positions().gradientWeight();
        if (weight == 1 || gradientOp != ReduceOp.AVERAGE) {
            return;
        }
        for (Pair<String, ai.djl.nn.Parameter> p : getModel().getBlock().getParameters()) {
            if (p.getValue().requiresGradient()) {
                try (ai.djl.ndarray.NDArray gradient = p.getValue().getArray().getGradient()) {
                    gradient.muli(weight);
                }
            }
        }
    }

    private ModelExchange exchange() {
        if (exchange == null) {
            exchange = new ModelExchange(kolo, getModel().getBlock());
            exchange.gradientOp(gradientOp);
        }
        return exchange;
    }
}
