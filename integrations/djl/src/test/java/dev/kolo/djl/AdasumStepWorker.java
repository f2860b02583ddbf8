package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.listener.TrainingListenerAdapter;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * One worker of a test job that takes one {@code EasyTrain} step with DJL's plain SGD through a {@link KoloTrainer}
 * whose gradients combine by Adasum. Before the step a listener writes each trained parameter's values and this
 * rank's own gradient ({@code OUT/rank-R-param-K.bin}, {@code OUT/rank-R-grad-K.bin}); after it, the values
 * again ({@code OUT/rank-R-after-K.bin}). Arguments: {@code OUT SEED}.
 */
public final class AdasumStepWorker {
    static final float LEARNING_RATE = 0.1f;
    static final int LOCAL_BATCH = 8;

    private AdasumStepWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        try (Kolo kolo = Kolo.init()) {
            int rank = kolo.rank();
            Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(LEARNING_RATE)).build();
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()).optOptimizer(sgd)
                    .addTrainingListeners(new TrainingListenerAdapter() {
                        @Override
                        public void onTrainingBatch(Trainer trainer, BatchData batchData) {
                            write(trainer.getModel(), out, rank, true);
                        }
                    });
            try (Model model = Model.newInstance("adasum-cnn")) {
                Engine.getInstance().setRandomSeed((int) seed + rank);
                model.setBlock(DjlWorker.network());
                try (KoloTrainer trainer = new KoloTrainer(kolo, model, config).gradientReduceOp(ReduceOp.ADASUM);
                     NDManager data = model.getNDManager().newSubManager()) {
                    trainer.initialize(new Shape(1, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                    ArrayDataset shard = new ArrayDataset.Builder()
                            .setData(data.create(DjlWorker.images(0, rank * LOCAL_BATCH, LOCAL_BATCH),
                                    new Shape(LOCAL_BATCH, 1, DjlWorker.IMAGE, DjlWorker.IMAGE)))
                            .optLabels(data.create(DjlWorker.labels(0, rank * LOCAL_BATCH, LOCAL_BATCH)))
                            .setSampling(LOCAL_BATCH, false).build();
                    EasyTrain.fit(trainer, 1, shard, null);
                    write(model, out, rank, false);
                }
            }
        }
    }

    private static void write(Model model, Path out, int rank, boolean before) {
        try {
            int k = 0;
            for (var p : model.getBlock().getParameters()) {
                if (!p.getValue().requiresGradient()) {
                    continue;
                }
                var array = p.getValue().getArray();
                if (before) {
                    DjlWorker.write(out.resolve("rank-" + rank + "-param-" + k + ".bin"), array.toFloatArray());
                    DjlWorker.write(out.resolve("rank-" + rank + "-grad-" + k + ".bin"),
                            array.getGradient().toFloatArray());
                } else {
                    DjlWorker.write(out.resolve("rank-" + rank + "-after-" + k + ".bin"), array.toFloatArray());
                }
                k++;
            }
            System.out.println((before ? "before" : "after") + " the step: " + k + " parameters written");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
