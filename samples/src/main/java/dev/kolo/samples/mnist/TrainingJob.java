package dev.kolo.samples.mnist;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.LrScaling;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The sample training job as the worker runs it: flags, data, training (elastic or fixed, see {@link Trainer}),
 * summary line.
 */
public final class TrainingJob {
    /**
     * How long a worker that was asked to stop (SIGTERM) waits for its next commit to leave an elastic job (the
     * others go on without rollback), or for the next step boundary to stop a fixed one with that step checkpointed,
     * before it exits anyway. Within Kubernetes' default grace period of 30 s (k8s-manifests/ give 120 s).
     */
    public static final Duration LEAVE_TIMEOUT = Duration.ofSeconds(25);

    private final TrainSettings settings;
    private final Path dataDir;
    private FashionMnist data;
    private volatile boolean leaveRequested;
    private volatile TrainingState current;

    private TrainingJob(TrainSettings settings, Path dataDir) {
        this.settings = settings;
        this.dataDir = dataDir;
    }

    /** Fails with one line saying how to get Fashion-MNIST if its files are missing. */
    public void checkData() {
        FashionMnist.requirePresent(dataDir);
    }

    /** Loads the data set now (before joining, so that the others never wait for a newcomer to read it). */
    public void loadData() {
        if (data == null) {
            data = FashionMnist.load(dataDir);
        }
    }

    /**
     * The training or the test set of {@code --data}'s files, for a program that hands the data to
     * {@link #runPartitioned} in another form (a Spark table).
     *
     * @return {images, labels}: 784 unsigned bytes an image, row after row, and a label 0 to 9 each
     */
    public byte[][] dataSet(boolean training) {
        loadData();
        ImageSet set = training ? data.train() : data.test();
        return new byte[][] {set.images(), set.labels()};
    }

    /**
     * Trains with the other ranks of {@code kolo} and returns the summary line
     * {@code kolo: done rank=R size=N epochs=E test_accuracy=A checksum=HEX}. In an elastic job it survives
     * lost workers and admits new ones; in a fixed one a lost worker stops it.
     *
     * @throws dev.kolo.elastic.ElasticJobFailedException if the job cannot go on (print it, exit with its status)
     * @throws dev.kolo.elastic.WorkerLeftException if this worker left at a commit after {@link #requestLeave()}
     */
    public String run(Kolo kolo, PrintStream out) {
        loadData();
        return train(kolo, out, data, false);
    }

    /**
     * Trains as {@link #run} does on data the caller hands over instead of {@code --data}'s files: each rank its own
     * partition of the training set (as each task of a Spark stage reads one), every rank the whole test set. Each
     * rank trains on as many of its images as the smallest partition holds, visiting each once an epoch; a restart
     * from a checkpoint resumes within the partitions, which must then be the same. For fixed jobs.
     *
     * @param trainImages this rank's training images, 784 unsigned bytes each, row after row
     * @param trainLabels their labels, 0 to 9
     * @param testImages  the whole test set's images
     * @param testLabels  its labels
     */
    public String runPartitioned(Kolo kolo, PrintStream out, byte[] trainImages, byte[] trainLabels,
            byte[] testImages, byte[] testLabels) {
        FashionMnist given = new FashionMnist(images(trainImages, trainLabels), images(testImages, testLabels));
        return train(kolo, out, given, true);
    }

    private static ImageSet images(byte[] images, byte[] labels) {
        if (labels.length == 0 || images.length != labels.length * FashionMnist.PIXELS) {
            throw new IllegalArgumentException(images.length + " bytes of images for " + labels.length + " labels: "
                    + "expected " + FashionMnist.PIXELS + " bytes an image and at least one image");
        }
        return new ImageSet(images, labels, labels.length, FashionMnist.PIXELS);
    }

    private String train(Kolo kolo, PrintStream out, FashionMnist data, boolean partitioned) {
        Trainer trainer = new Trainer(kolo, data, settings, out, partitioned);
        try (TrainingState state = new TrainingState(kolo, trainer.model(), trainer.rule(), trainer.sampler(), settings,
                LEAVE_TIMEOUT)) {
            current = state;
            if (leaveRequested) {
                state.requestLeave();
            }
            TrainResult r = trainer.run(state);
            return summary(kolo.rank(), kolo.size(), r);
        } finally {
            current = null;
        }
    }

    /**
     * Asks this worker to leave an elastic job at its next commit, the others going on without rollback, or to stop a
     * fixed job at its next step boundary, every worker checkpointing that step (from a shutdown hook; thread-safe).
     * Before training has started the request waits for it.
     */
    public void requestLeave() {
        leaveRequested = true;
        TrainingState s = current;
        if (s != null) {
            s.requestLeave();
        }
    }

    static String summary(int rank, int size, TrainResult r) {
        return String.format(Locale.ROOT, "kolo: done rank=%d size=%d epochs=%d test_accuracy=%.4f checksum=%s", rank,
                size, r.epochs(), r.testAccuracy(), ParameterChecksum.hex(r.checksum()));
    }

    /** The training flags of {@code worker.jar}. */
    public static final class Options {
        @Option(names = "--epochs", paramLabel = "E", defaultValue = "3",
                description = "Passes over the training set (default: ${DEFAULT-VALUE}).")
        int epochs;

        @Option(names = "--batch-size", paramLabel = "B", defaultValue = "64",
                description = "Examples per worker per backward pass; the global batch is B x workers x "
                        + "backward passes per step (default: ${DEFAULT-VALUE}).")
        int batchSize;

        @Option(names = "--lr", paramLabel = "LR", defaultValue = "0.05",
                description = "Base learning rate for one worker's batch; scaled by --lr-scaling (default: "
                        + "${DEFAULT-VALUE}).")
        double lr;

        @Option(names = "--lr-scaling", paramLabel = "RULE", defaultValue = "linear",
                description = "How the learning rate grows with workers x backward passes: linear, sqrt or none "
                        + "(default: ${DEFAULT-VALUE}).")
        String lrScaling;

        @Option(names = "--warmup-epochs", paramLabel = "E", defaultValue = "auto",
                description = "Epochs of gradual learning-rate warm-up from the base to the scaled rate; auto: "
                        + "max(1, epochs/5) when the global batch is " + TrainSettings.LARGE_GLOBAL_BATCH
                        + " or more, else none (default: ${DEFAULT-VALUE}).")
        String warmupEpochs;

        @Option(names = "--lr-decay", paramLabel = "KIND", defaultValue = "cosine",
                description = "After the warm-up: cosine (to zero at the last epoch) or none (default: "
                        + "${DEFAULT-VALUE}).")
        String lrDecay;

        @Option(names = "--optimizer", paramLabel = "RULE", defaultValue = "sgd",
                description = "The update rule: sgd (with --momentum), adam, adamw (decoupled weight decay) or lamb "
                        + "(layer-wise trust ratio, for large global batches); its state is committed and "
                        + "checkpointed with the parameters (default: ${DEFAULT-VALUE}).")
        String optimizer;

        @Option(names = "--momentum", paramLabel = "M", defaultValue = "0.9",
                description = "SGD momentum (default: ${DEFAULT-VALUE}).")
        double momentum;

        @Option(names = "--weight-decay", paramLabel = "W", defaultValue = "0",
                description = "Weight decay: L2 for sgd and adam, decoupled for adamw and lamb (default: "
                        + "${DEFAULT-VALUE}).")
        double weightDecay;

        @Option(names = "--compression", paramLabel = "KIND", defaultValue = "none",
                description = "Gradients on the wire: none (float32), fp16 or bf16 (default: ${DEFAULT-VALUE}).")
        String compression;

        @Option(names = "--reduce-op", paramLabel = "OP", defaultValue = "average",
                description = "How the ranks' gradients combine: average, sum or adasum (adaptive summation: more "
                        + "ranks without a new learning rate) (default: ${DEFAULT-VALUE}).")
        String reduceOp;

        @Option(names = "--backward-passes-per-step", paramLabel = "K", defaultValue = "1",
                description = "Backward passes accumulated locally per gradient exchange (default: "
                        + "${DEFAULT-VALUE}).")
        int backwardPassesPerStep;

        @Option(names = "--model", paramLabel = "KIND", defaultValue = TrainSettings.MLP,
                description = "mlp (a multilayer perceptron in plain Java), cnn (a convolutional network in DJL "
                        + "on the PyTorch engine) or resnet (a small ResNet with BatchNorm in DJL) (default: "
                        + "${DEFAULT-VALUE}).")
        String model;

        @Option(names = "--intra-op-threads", paramLabel = "N", defaultValue = "1",
                description = "Threads of the DJL engine (cnn, resnet) per worker; several workers share a machine's cores "
                        + "(default: ${DEFAULT-VALUE}).")
        int intraOpThreads;

        @Option(names = "--hidden", paramLabel = "N,N", split = ",", defaultValue = "256,128",
                description = "Hidden layer widths of the mlp (default: ${DEFAULT-VALUE}).")
        int[] hidden;

        @Option(names = "--seed", paramLabel = "S", defaultValue = "42",
                description = "Seed of the initial weights and the per-epoch shuffles (default: ${DEFAULT-VALUE}).")
        long seed;

        @Option(names = "--max-steps", paramLabel = "N", defaultValue = "0",
                description = "Stop after N optimizer steps, for quick runs; 0 for no limit (default: "
                        + "${DEFAULT-VALUE}).")
        long maxSteps;

        @Option(names = "--train-limit", paramLabel = "N", defaultValue = "0",
                description = "Train on the first N examples only; 0 for all 60000 (default: ${DEFAULT-VALUE}).")
        int trainLimit;

        @Option(names = "--log-every", paramLabel = "STEPS", defaultValue = "100",
                description = "Steps between progress lines (default: ${DEFAULT-VALUE}).")
        int logEvery;

        @Option(names = "--data", paramLabel = "DIR",
                description = "Directory of the four Fashion-MNIST IDX files, gzipped or not (default: "
                        + "/usr/share/datasets/fashion-mnist, from 'apt-get install dataset-fashion-mnist').")
        Path data;

        @Option(names = "--checkpoint-every", paramLabel = "STEPS", defaultValue = "500",
                description = "Steps between checkpoints, rounded up to a multiple of --commit-every (default: "
                        + "${DEFAULT-VALUE}).")
        int checkpointEvery;

        @Option(names = "--commit-every", paramLabel = "STEPS", defaultValue = "10",
                description = "Steps between commits of the training state: what the survivors of a lost worker "
                        + "roll back to, and where workers join or leave an elastic job (default: ${DEFAULT-VALUE}).")
        int commitEvery;

        @Option(names = "--slow-rank", paramLabel = "R", defaultValue = "-1",
                description = "Make rank R a straggler: it pauses after each backward pass for (--slowdown - 1) "
                        + "times the pass's own time; -1 for none (default: ${DEFAULT-VALUE}).")
        int slowRank;

        @Option(names = "--slowdown", paramLabel = "X", defaultValue = "1.5",
                description = "How many times as long --slow-rank takes per pass (default: ${DEFAULT-VALUE}).")
        double slowdown;

        /** @param checkpointDir where to write checkpoints and resume from (KOLO_CHECKPOINT_DIR), or null */
        public TrainingJob toJob(Path checkpointDir) {
            double warmup = parseWarmup(warmupEpochs);
            boolean cosine = switch (lrDecay.trim().toLowerCase(Locale.ROOT)) {
                case "cosine" -> true;
                case "none" -> false;
                default -> throw new IllegalArgumentException("--lr-decay must be cosine or none (got '" + lrDecay
                        + "')");
            };
            for (int h : hidden) {
                if (h < 1) {
                    throw new IllegalArgumentException("--hidden widths must be at least 1 (got " + h + ")");
                }
            }
            if (!(momentum >= 0 && momentum < 1) || !(weightDecay >= 0)) {
                throw new IllegalArgumentException("--momentum must be in [0, 1) and --weight-decay 0 or more");
            }
            TrainSettings s = new TrainSettings(epochs, batchSize, lr, LrScaling.parse(lrScaling), warmup, cosine,
                    Compression.parse(compression), backwardPassesPerStep, seed, maxSteps, logEvery, hidden.clone(),
                    momentum, weightDecay, trainLimit, 0, checkpointDir,
                    checkpointEvery, commitEvery, model.trim().toLowerCase(Locale.ROOT), intraOpThreads,
                    optimizer.trim().toLowerCase(Locale.ROOT), parseReduceOp(reduceOp), slowRank, slowdown);
            return new TrainingJob(s, data != null ? data : FashionMnist.DEBIAN_DIR);
        }

        private static dev.kolo.runtime.ReduceOp parseReduceOp(String text) {
            return switch (text.trim().toLowerCase(Locale.ROOT)) {
                case "average" -> dev.kolo.runtime.ReduceOp.AVERAGE;
                case "sum" -> dev.kolo.runtime.ReduceOp.SUM;
                case "adasum" -> dev.kolo.runtime.ReduceOp.ADASUM;
                default -> throw new IllegalArgumentException("--reduce-op must be average, sum or adasum (got '"
                        + text + "')");
            };
        }

        private static double parseWarmup(String text) {
            if (text.trim().equalsIgnoreCase("auto")) {
                return -1;
            }
            try {
                double v = Double.parseDouble(text.trim());
                if (v >= 0) {
                    return v;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new IllegalArgumentException("--warmup-epochs must be auto or a number of epochs >= 0 (got '"
                    + text + "')");
        }
    }

}
