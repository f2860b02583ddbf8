package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import ai.djl.training.listener.TrainingListener;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;

/**
 * A DJL {@link Trainer} whose {@link #step()} first averages every gradient over the ranks of a Kolo job: DJL's
 * own training flow, distributed. Build it in place of {@code model.newTrainer(config)} and keep everything
 * else: any DJL {@code Optimizer}, loss, evaluators and listeners in the {@link TrainingConfig},
 * {@code EasyTrain.fit(trainer, epochs, trainShard, validation)} or a loop of your own with
 * {@code trainer.step()}.
 *
 * <pre>{@code
 * try (Kolo kolo = Kolo.init();
 *      Trainer trainer = new KoloTrainer(kolo, model, config)) {   // instead of model.newTrainer(config)
 *     trainer.initialize(inputShape);                             // also makes every rank start from rank 0's model
 *     EasyTrain.fit(trainer, epochs, thisRanksShard, validation);
 * }
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
 * or a checkpoint cannot hold it: after a restore it starts again from zero. For elastic jobs prefer Kolo's update
 * rules through {@link DistributedTrainer}, whose state {@link DistributedTrainer#register} puts in every commit.
 *
 * <p>Every rank must build the same model and call {@code step()} the same number of times. One training thread.
 */
public class KoloTrainer extends Trainer {
    private final Kolo kolo;
    private final BatchSamples samples;
    private long steps;
    private ModelExchange exchange;
    private ReduceOp gradientOp = ReduceOp.AVERAGE;

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

    /** Initializes the model as DJL does, then gives every rank rank 0's parameters and buffers. */
    @Override
    public void initialize(Shape... shapes) {
        super.initialize(shapes);
        broadcastParameters(0);
    }

    /**
     * Overwrites every parameter and buffer with rank {@code rootRank}'s values. {@link #initialize} calls it;
     * call it yourself after loading a model that not every rank loaded from the same file.
     */
    public void broadcastParameters(int rootRank) {
        exchange().broadcast(rootRank);
    }

    /**
     * Averages the gradients and buffers over all ranks, then updates the model with DJL's optimizer.
     *
     * @throws dev.kolo.runtime.KoloException if a collective fails (a lost worker, for instance)
     */
    @Override
    public void step() {
        exchange().averageGradientsAndBuffers();
        super.step();
        kolo.reportStep(++steps, samples.sinceStep); // the status page's step rate, samples/s and step times
        samples.sinceStep = 0;
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
     * Registers every parameter and buffer of the model with {@code state}, as the engine's own memory, so that
     * commits and checkpoints hold them and a restore writes them back into the model. DJL's optimizer state is
     * not among them (see the class comment).
     *
     * @throws IllegalStateException if the engine hands out copies of its arrays rather than views (register
     *     a {@link DistributedTrainer} instead, which keeps copies of its own)
     */
    public KoloTrainer register(ElasticState state) {
        exchange().register(state, true);
        return this;
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

    /** @return this worker's handle on the job */
    public Kolo kolo() {
        return kolo;
    }

    private ModelExchange exchange() {
        if (exchange == null) {
            exchange = new ModelExchange(kolo, getModel().getBlock());
            exchange.gradientOp(gradientOp);
        }
        return exchange;
    }
}
