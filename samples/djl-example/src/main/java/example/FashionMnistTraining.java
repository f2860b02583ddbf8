package example;

// example:imports
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.metric.Metrics;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.TrainingConfig;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.tracker.Tracker;
import dev.kolo.djl.DistributedSampler;
import dev.kolo.djl.KoloOptimizer;
import dev.kolo.djl.KoloTrainer;
import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import java.nio.file.Path;
import java.util.Locale;
// example:end

/**
 * Trains a convolutional network with BatchNorm on Fashion-MNIST with every worker of a Kolo job: DJL's own
 * {@code EasyTrain} through a {@link KoloTrainer}, each rank on its share of every epoch ({@link DistributedSampler}),
 * Kolo's AdamW ({@link KoloOptimizer}), and commits and checkpoints that hold the model, AdamW's moments and the
 * position in the epoch, so that a lost worker, an admitted one or a restart goes on at the next sample.
 *
 * <p>Start it through Kolo's launcher, which starts the workers and gives each the job's settings:
 * {@code java -jar worker.jar launch -np 2 -- java -jar target/fashion-mnist-djl.jar}. Options:
 * {@code --epochs N} (default 4), {@code --data DIR} (the four IDX files; default
 * {@value FashionMnistFiles#DEBIAN_DIR}), {@code --limit N} (the first N images of each set, for a quick run).
 */
public final class FashionMnistTraining {
    static final int BATCH = 64; // each rank's; the global batch is 64 x workers
    static final long SEED = 42; // the shuffles', the same on every rank

    private FashionMnistTraining() {
    }

    public static void main(String[] args) throws Exception {
        int epochs = 4;
        Path data = Path.of(FashionMnistFiles.DEBIAN_DIR);
        int limit = 0;
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--epochs" -> epochs = Integer.parseInt(value);
                case "--data" -> data = Path.of(value);
                case "--limit" -> limit = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("unknown option '" + args[i]
                        + "': the options are --epochs N, --data DIR and --limit N");
            }
        }
        System.setProperty("ai.djl.offline", "true"); // the engine's native library is in target/lib
        System.setProperty("disableProgressBar", "true"); // a line per epoch: the launcher prefixes every line
        FashionMnistFiles.requirePresent(data); // before joining: every worker says so, none waits for the others
        try (Kolo kolo = Kolo.init()) { // the job this worker belongs to, from the KOLO_* settings launch gives
            // Workers on one machine share its cores: one engine thread each by default.
            int threads = Math.max(1, Runtime.getRuntime().availableProcessors() / kolo.localSize());
            System.setProperty("ai.djl.pytorch.num_threads", Integer.toString(threads));
            train(kolo, epochs, data, limit);
        }
    }

    // example:train
    static void train(Kolo kolo, int epochs, Path data, int limit) throws Exception {
        try (Model model = Model.newInstance("fashion-mnist-cnn"); NDManager memory = NDManager.newBaseManager()) {
            Engine.getInstance().setRandomSeed((int) SEED); // the same run every time (rank 0's start is everyone's)
            model.setBlock(network());
            DistributedSampler sampler = new DistributedSampler(kolo, BATCH, true, SEED); // this rank's share
            RandomAccessDataset train = FashionMnistFiles.read(memory, data, "train", limit, sampler);
            RandomAccessDataset test = FashionMnistFiles.read(memory, data, "t10k", limit,
                    new DistributedSampler(kolo, 100, false, SEED));
            int steps = Math.toIntExact(epochs * sampler.positions().stepsPerEpoch(train.size()));
            TrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(KoloOptimizer.koloAdamW().weightDecay(1e-4).learningRate(Tracker.cosine()
                            .setBaseValue(0.002f).optFinalValue(1e-5f).setMaxUpdates(steps).build()).build())
                    .addEvaluator(new Accuracy())
                    .addTrainingListeners(TrainingListener.Defaults.logging()); // logs on rank 0 only
            try (KoloTrainer trainer = new KoloTrainer(kolo, model, config);
                 ElasticState state = ElasticState.builder(kolo).checkpointEvery(10).build()) {
                trainer.setMetrics(new Metrics()); // the figures the logging listener prints each epoch
                trainer.initialize(new Shape(1, 1, 28, 28));
                trainer.register(state, sampler); // the model, AdamW's moments, the position in the epoch
                double accuracy = Elastic.runOrExit(kolo, state, s -> {
                    trainer.fit(epochs, train, test); // from the last commit: a restart goes on from there
                    return testAccuracy(trainer, test);
                });
                state.finishCheckpoints(); // with KOLO_CHECKPOINT_DIR set, the store holds the final model
                System.out.printf(Locale.ROOT, "example: done rank=%d size=%d steps=%d test_accuracy=%.4f "
                        + "checksum=%s%n", kolo.rank(), kolo.size(), trainer.steps(), accuracy, trainer.checksum());
            }
        }
    }
    // example:end

    /** Two convolutions with BatchNorm, then two dense layers: about 0.91 on Fashion-MNIST after 4 epochs. */
    static SequentialBlock network() {
        return new SequentialBlock()
                .add(Conv2d.builder().setKernelShape(new Shape(5, 5)).optPadding(new Shape(2, 2)).setFilters(16)
                        .build())
                .add(BatchNorm.builder().build()).add(Activation::relu).add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(Conv2d.builder().setKernelShape(new Shape(5, 5)).setFilters(32).build())
                .add(BatchNorm.builder().build()).add(Activation::relu).add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(128).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(10).build());
    }

    /** The accuracy on the test set: each rank evaluates its share, and the ranks average their figures. */
    static double testAccuracy(KoloTrainer trainer, RandomAccessDataset test) {
        Accuracy accuracy = new Accuracy();
        accuracy.addAccumulator("test");
        try {
            for (Batch batch : trainer.iterateDataset(test)) {
                NDList predictions = trainer.evaluate(batch.getData());
                accuracy.updateAccumulator("test", batch.getLabels(), predictions);
                batch.close();
            }
        } catch (java.io.IOException | ai.djl.translate.TranslateException e) {
            throw new IllegalStateException("reading the test set failed: " + e.getMessage(), e);
        }
        return trainer.average("test-accuracy", accuracy.getAccumulator("test"));
    }
}
