package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.Sgd;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * One worker of a test job: a small convolutional network trained for a few steps on fixed synthetic data, the
 * global batch split evenly over the ranks (and over the backward passes of a step). After each step it writes
 * every parameter value to {@code OUT/rank-R-step-S.bin} and prints {@code step S checksum HEX}.
 *
 * <p>Arguments: {@code OUT STEPS GLOBAL_BATCH PASSES_PER_STEP COMPRESSION SEED [CHECKPOINT_DIR [HALT_AFTER]]};
 * the model's initial weights come from {@code SEED + rank}, so ranks start different until the broadcast.
 * With a checkpoint directory every step is committed and checkpointed (parameters, SGD velocity, the step),
 * and a start finds the newest checkpoint and resumes from it; rank 1 halts at once (as SIGKILL would stop it)
 * after committing step {@code HALT_AFTER}. With {@code -Dkolo.test.network=batchnorm} the network has a BatchNorm
 * layer, whose running statistics are printed as {@code buffers HEX} after each step and after a resume, and
 * written before each step's exchange ({@code OUT/rank-R-buffers-before-S.bin}) and after it
 * ({@code OUT/rank-R-buffers-after-S.bin}).
 */
public final class DjlWorker {
    static final int IMAGE = 8;
    static final int CLASSES = 5;
    static final double LEARNING_RATE = 0.05;
    static final double MOMENTUM = 0.9;
    static final double WEIGHT_DECAY = 1e-4;

    private DjlWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        int steps = Integer.parseInt(args[1]);
        int globalBatch = Integer.parseInt(args[2]);
        int passes = Integer.parseInt(args[3]);
        // "plain": DJL's own loop (its SGD, Trainer.step) in one process without Kolo, the reference.
        boolean plain = args[4].equals("plain");
        Compression compression = plain ? Compression.NONE : Compression.parse(args[4]);
        long seed = Long.parseLong(args[5]);
        Path checkpoints = args.length > 6 ? Path.of(args[6]) : null;
        int haltAfter = args.length > 7 ? Integer.parseInt(args[7]) : -1;
        if (plain) {
            trainPlain(out, steps, globalBatch, seed);
            return;
        }
        try (Kolo kolo = Kolo.init(); Model model = Model.newInstance("test-cnn")) {
            int rank = kolo.rank();
            int size = kolo.size();
            Engine.getInstance().setRandomSeed((int) seed + rank);
            model.setBlock(network());
            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()))) {
                trainer.initialize(new Shape(1, 1, IMAGE, IMAGE));
                DistributedTrainer dist = DistributedTrainer.builder(kolo, model)
                        .updateRule(new Sgd(MOMENTUM, WEIGHT_DECAY)).compression(compression)
                        .backwardPassesPerStep(passes).build();
                ElasticState state = null;
                int start = 0;
                if (checkpoints != null) {
                    state = ElasticState.builder(kolo).checkpointDirectory(checkpoints).checkpointEvery(1).build();
                    dist.register(state);
                    state.value("step", 0L);
                }
                if (state != null && state.restoreLatest().isPresent()) {
                    dist.loadParameters();
                    start = (int) state.longValue("step");
                    System.out.println("resumed at step " + start + " buffers " + checksum(bufferValues(model)));
                } else {
                    dist.broadcastParameters(0);
                }
                NDManager manager = trainer.getManager();
                int perPass = globalBatch / size / passes;
                for (int step = start; step < steps; step++) {
                    for (int pass = 0; pass < passes; pass++) {
                        int first = rank * globalBatch / size + pass * perPass;
                        try (NDManager batchManager = manager.newSubManager()) {
                            NDArray x = batchManager.create(images(step, first, perPass),
                                    new Shape(perPass, 1, IMAGE, IMAGE));
                            NDArray y = batchManager.create(labels(step, first, perPass));
                            try (GradientCollector gc = trainer.newGradientCollector()) {
                                NDArray loss = trainer.getLoss().evaluate(new NDList(y),
                                        trainer.forward(new NDList(x)));
                                gc.backward(loss);
                            }
                        }
                        boolean bn = "batchnorm".equals(System.getProperty("kolo.test.network"));
                        if (bn) {
                            write(out.resolve("rank-" + rank + "-buffers-before-" + step + ".bin"), bufferValues(model));
                        }
                        dist.step(LEARNING_RATE);
                        if (bn) {
                            write(out.resolve("rank-" + rank + "-buffers-after-" + step + ".bin"), bufferValues(model));
                        }
                    }
                    // The model's own arrays, not Kolo's copy: what the next forward pass computes with.
                    float[] values = modelValues(model);
                    write(out.resolve("rank-" + rank + "-step-" + step + ".bin"), values);
                    System.out.println("step " + step + " checksum " + checksum(values) + " buffers "
                            + checksum(bufferValues(model)));
                    if (state != null) {
                        state.set("step", step + 1L);
                        state.commit();
                        if (step == haltAfter && rank == 1) {
                            System.out.println("halting after step " + step);
                            Runtime.getRuntime().halt(137);
                        }
                    }
                }
                System.out.println("mean rank " + dist.average("rank", rank));
                if (state != null) {
                    state.finishCheckpoints();
                    state.close();
                }
            }
        }
    }

    /** The same model, data and update rule in DJL's own training loop, without Kolo. */
    static void trainPlain(Path out, int steps, int batch, long seed) throws IOException {
        try (Model model = Model.newInstance("test-cnn")) {
            Engine.getInstance().setRandomSeed((int) seed);
            model.setBlock(network());
            Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed((float) LEARNING_RATE))
                    .optMomentum((float) MOMENTUM).optWeightDecays((float) WEIGHT_DECAY).build();
            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(sgd))) {
                trainer.initialize(new Shape(1, 1, IMAGE, IMAGE));
                for (int step = 0; step < steps; step++) {
                    try (NDManager batchManager = trainer.getManager().newSubManager()) {
                        NDArray x = batchManager.create(images(step, 0, batch), new Shape(batch, 1, IMAGE, IMAGE));
                        NDArray y = batchManager.create(labels(step, 0, batch));
                        try (GradientCollector gc = trainer.newGradientCollector()) {
                            gc.backward(trainer.getLoss().evaluate(new NDList(y), trainer.forward(new NDList(x))));
                        }
                        trainer.step();
                    }
                    float[] values = modelValues(model);
                    write(out.resolve("rank-0-step-" + step + ".bin"), values);
                    System.out.println("step " + step + " checksum " + checksum(values));
                }
            }
        }
    }

    static SequentialBlock network() {
        if ("batchnorm".equals(System.getProperty("kolo.test.network"))) {
            return new SequentialBlock()
                    .add(Conv2d.builder().setKernelShape(new Shape(3, 3)).setFilters(4).build())
                    .add(BatchNorm.builder().build())
                    .add(Activation::relu)
                    .add(Blocks.batchFlattenBlock())
                    .add(Linear.builder().setUnits(16).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(CLASSES).build());
        }
        return new SequentialBlock()
                .add(Conv2d.builder().setKernelShape(new Shape(3, 3)).setFilters(4).build())
                .add(Activation::relu)
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(16).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(CLASSES).build());
    }

    /** Example {@code index} of step {@code step}: the same on every rank and in every run. */
    static float[] images(int step, int first, int count) {
        float[] x = new float[count * IMAGE * IMAGE];
        for (int i = 0; i < count; i++) {
            Random r = new Random(1_000_003L * step + first + i);
            for (int j = 0; j < IMAGE * IMAGE; j++) {
                x[i * IMAGE * IMAGE + j] = (float) r.nextGaussian();
            }
        }
        return x;
    }

    static float[] labels(int step, int first, int count) {
        float[] y = new float[count];
        for (int i = 0; i < count; i++) {
            y[i] = new Random(7_000_003L * step + first + i).nextInt(CLASSES);
        }
        return y;
    }

    /** The values of every parameter, buffers included, as the engine holds them. */
    static float[] modelValues(Model model) {
        return values(model, p -> true);
    }

    /** The values of the buffers (BatchNorm's running mean and variance). */
    static float[] bufferValues(Model model) {
        return values(model, p -> p.getType() == ai.djl.nn.Parameter.Type.RUNNING_MEAN
                || p.getType() == ai.djl.nn.Parameter.Type.RUNNING_VAR);
    }

    private static float[] values(Model model, java.util.function.Predicate<ai.djl.nn.Parameter> which) {
        java.util.List<Float> all = new java.util.ArrayList<>();
        for (var p : model.getBlock().getParameters()) {
            if (which.test(p.getValue())) {
                for (float v : p.getValue().getArray().toFloatArray()) {
                    all.add(v);
                }
            }
        }
        float[] out = new float[all.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = all.get(i);
        }
        return out;
    }

    static void write(Path file, float[] values) throws IOException {
        Files.createDirectories(file.getParent());
        try (DataOutputStream o = new DataOutputStream(Files.newOutputStream(file))) {
            for (float v : values) {
                o.writeFloat(v);
            }
        }
    }

    static String checksum(float[] values) {
        long h = 1125899906842597L;
        for (float v : values) {
            h = 31 * h + Float.floatToRawIntBits(v);
        }
        return Long.toHexString(h);
    }
}
