package dev.kolo.samples.mnist;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.train.Adam;
import dev.kolo.runtime.train.AdamW;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.Lamb;
import dev.kolo.runtime.train.LrScaling;
import dev.kolo.runtime.train.Sgd;
import dev.kolo.runtime.train.UpdateRule;
import java.nio.file.Path;

/**
 * Settings of a training run (the worker's flags).
 *
 * @param batchSize        examples per rank per backward pass
 * @param warmupEpochs     learning-rate warm-up; negative means automatic (see {@link #warmupFor})
 * @param maxSteps         stop after this many optimizer steps in total, 0 for no limit
 * @param trainLimit       use only the first N training examples, 0 for all (quick runs, tests)
 * @param checkpointDir    where to write checkpoints and resume from; null for none
 * @param checkpointEvery  optimizer steps between checkpoints (rounded up to a multiple of {@code commitEvery})
 * @param commitEvery      optimizer steps between commits of the training state (what a lost worker rolls back to)
 * @param model            {@value #MLP}, {@value #CNN} or {@value #RESNET}
 * @param intraOpThreads   the DJL engine's threads per worker
 * @param optimizer        the update rule: {@code sgd} (with {@code momentum}), {@code adam}, {@code adamw} or
 *                         {@code lamb}, each with {@code weightDecay}
 * @param reduceOp         how the ranks' gradients combine: AVERAGE, SUM or ADASUM
 * @param slowRank         the rank that computes {@code slowdown} times as long as it takes (a straggler for the
 *                         straggler policies' runs), -1 for none
 */
record TrainSettings(int epochs, int batchSize, double lr, LrScaling lrScaling, double warmupEpochs,
                     boolean cosineDecay, Compression compression, int backwardPassesPerStep, long seed,
                     long maxSteps, int logEvery, int[] hidden, double momentum, double weightDecay,
                     int trainLimit, int testLimit, Path checkpointDir, int checkpointEvery, int commitEvery,
                     String model, int intraOpThreads, String optimizer, ReduceOp reduceOp,
                     int slowRank, double slowdown) {

    /** The hand-written multilayer perceptron (the default). */
    static final String MLP = "mlp";
    /** The convolutional network in DJL on the PyTorch engine. */
    static final String CNN = "cnn";
    /** The small ResNet with BatchNorm in DJL on the PyTorch engine. */
    static final String RESNET = "resnet";

    /** The update rules {@code --optimizer} names. */
    static final java.util.List<String> OPTIMIZERS = java.util.List.of("sgd", "adam", "adamw", "lamb");

    /** Global batches of at least this many examples get a warm-up by default. */
    static final int LARGE_GLOBAL_BATCH = 256;

    TrainSettings {
        if (epochs < 1 || batchSize < 1 || backwardPassesPerStep < 1 || logEvery < 1 || checkpointEvery < 1
                || commitEvery < 1) {
            throw new IllegalArgumentException("--epochs, --batch-size, --backward-passes-per-step, --log-every, "
                    + "--checkpoint-every and --commit-every must be at least 1");
        }
        if (!(lr > 0) || maxSteps < 0 || trainLimit < 0 || testLimit < 0) {
            throw new IllegalArgumentException("--lr must be positive; --max-steps and limits 0 or more");
        }
        if (!model.equals(MLP) && !model.equals(CNN) && !model.equals(RESNET)) {
            throw new IllegalArgumentException("--model must be mlp, cnn or resnet (got '" + model + "')");
        }
        if (!OPTIMIZERS.contains(optimizer)) {
            throw new IllegalArgumentException("--optimizer must be one of " + String.join(", ", OPTIMIZERS) + " (got '"
                    + optimizer + "')");
        }
        if (slowRank < -1 || !(slowdown >= 1 && slowdown <= 100)) {
            throw new IllegalArgumentException("--slow-rank must be a rank or -1 for none, and --slowdown 1 to 100");
        }
        if (intraOpThreads < 1 || intraOpThreads > 256) {
            throw new IllegalArgumentException("--intra-op-threads must be 1 to 256 (got " + intraOpThreads + ")");
        }
    }

    /**
     * Automatic warm-up: when the global batch is large ({@value #LARGE_GLOBAL_BATCH}+ examples) warm up over
     * the first epoch, or the first fifth of the run for runs of more than five epochs; otherwise none.
     */
    double warmupFor(int size) {
        if (warmupEpochs >= 0) {
            return warmupEpochs;
        }
        long global = (long) batchSize * size * backwardPassesPerStep;
        return global >= LARGE_GLOBAL_BATCH ? Math.max(1, epochs / 5.0) : 0;
    }

    /** @return a new instance of the update rule {@code optimizer} names */
    UpdateRule updateRule() {
        switch (optimizer) {
            case "adam": return new Adam(weightDecay);
            case "adamw": return new AdamW(weightDecay);
            case "lamb": return new Lamb(weightDecay);
            default: return new Sgd(momentum, weightDecay);
        }
    }

    /** @return every how many commits one goes to the checkpoint store: checkpointEvery / commitEvery, rounded up */
    int checkpointEveryCommits() {
        return (checkpointEvery + commitEvery - 1) / commitEvery;
    }

    /** @return layer widths: 784, the hidden layers, 10 */
    int[] layerSizes(int inputs, int classes) {
        int[] sizes = new int[hidden.length + 2];
        sizes[0] = inputs;
        System.arraycopy(hidden, 0, sizes, 1, hidden.length);
        sizes[sizes.length - 1] = classes;
        return sizes;
    }
}
