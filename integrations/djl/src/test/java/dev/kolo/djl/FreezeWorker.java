package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.runtime.Kolo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * One worker of a test job that trains {@link DjlWorker}'s BatchNorm network through a {@link KoloTrainer} while
 * the trained set changes, as fine-tuning does: the convolution is frozen throughout, the first linear layer
 * frozen for the first half of the steps and then unfrozen, the last one trained for the first half and then
 * frozen. Right after the broadcast rank 1 adds 1 to its frozen convolution's weights: a frozen parameter is not
 * sent, so each rank must keep its own.
 *
 * <p>Per step S it writes, under {@code OUT}: {@code rank-R-pre-S.bin} (the BatchNorm statistics after this
 * rank's forward pass, before the step's exchange), {@code rank-R-post-S.bin} (after the step) and
 * {@code rank-R-conv-S.bin}, {@code rank-R-first-S.bin}, {@code rank-R-last-S.bin} (the layers' values after
 * the step). Arguments: {@code OUT STEPS GLOBAL_BATCH}.
 */
public final class FreezeWorker {
    static final int CONV = 0;
    static final int FIRST = 4;
    static final int LAST = 6;

    private FreezeWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        int steps = Integer.parseInt(args[1]);
        int globalBatch = Integer.parseInt(args[2]);
        System.setProperty("kolo.test.network", "batchnorm");
        try (Kolo kolo = Kolo.init(); Model model = Model.newInstance("freeze")) {
            int rank = kolo.rank();
            int local = globalBatch / kolo.size();
            Engine.getInstance().setRandomSeed(5 + rank);
            SequentialBlock net = DjlWorker.network();
            model.setBlock(net);
            Block conv = net.getChildren().valueAt(CONV);
            Block first = net.getChildren().valueAt(FIRST);
            Block last = net.getChildren().valueAt(LAST);
            Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build();
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()).optOptimizer(sgd);
            int[] step = {0};
            try (Trainer trainer = new KoloTrainer(kolo, model, config) {
                @Override
                public void step() {
                    write(out, rank, "pre", step[0], DjlWorker.bufferValues(model));
                    super.step();
                    write(out, rank, "post", step[0], DjlWorker.bufferValues(model));
                }
            }) {
                conv.freezeParameters(true);
                first.freezeParameters(true);
                trainer.initialize(new Shape(1, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                if (rank == 1) {
                    conv.getParameters().valueAt(0).getArray().addi(1f);
                }
                for (; step[0] < steps; step[0]++) {
                    int s = step[0];
                    if (s == steps / 2) {
                        first.freezeParameters(false);
                        last.freezeParameters(true);
                    }
                    try (NDManager batch = trainer.getManager().newSubManager()) {
                        NDArray x = batch.create(DjlWorker.images(s, rank * local, local),
                                new Shape(local, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                        NDArray y = batch.create(DjlWorker.labels(s, rank * local, local));
                        try (GradientCollector gc = trainer.newGradientCollector()) {
                            gc.backward(trainer.getLoss().evaluate(new NDList(y), trainer.forward(new NDList(x))));
                        }
                        trainer.step();
                    }
                    write(out, rank, "conv", s, values(conv));
                    write(out, rank, "first", s, values(first));
                    write(out, rank, "last", s, values(last));
                }
            }
        }
    }

    private static float[] values(Block block) {
        java.util.List<float[]> parts = new java.util.ArrayList<>();
        int total = 0;
        for (var p : block.getParameters()) {
            float[] v = p.getValue().getArray().toFloatArray();
            parts.add(v);
            total += v.length;
        }
        float[] all = new float[total];
        int at = 0;
        for (float[] v : parts) {
            System.arraycopy(v, 0, all, at, v.length);
            at += v.length;
        }
        return all;
    }

    private static void write(Path out, int rank, String what, int step, float[] values) {
        try {
            DjlWorker.write(out.resolve("rank-" + rank + "-" + what + "-" + step + ".bin"), values);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
