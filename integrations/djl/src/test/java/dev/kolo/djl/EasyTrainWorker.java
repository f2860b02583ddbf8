package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.listener.EpochTrainingListener;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.SaveModelTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListenerAdapter;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.runtime.Kolo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * One worker of a test job that trains as DJL users do: {@code EasyTrain.fit} with DJL's Adam, through a
 * {@link KoloTrainer} (or, with {@code plain}, DJL's own trainer in one process over the global batch). Each rank
 * gets its shard of a fixed synthetic data set ({@link DjlWorker#images}): step s's global batch is split evenly.
 * A listener writes the model's values before every batch ({@code OUT/rank-R-before-B.bin}) and after the epoch
 * ({@code OUT/rank-R-end.bin}); a {@link SaveModelTrainingListener} (saving into {@code OUT/model}) and a
 * {@link LoggingTrainingListener} are in the configuration, and a listener wrapped in
 * {@link KoloTrainer#onRankZero} prints {@code rank-zero listener ran}.
 *
 * <p>Arguments: {@code OUT STEPS GLOBAL_BATCH MODE SEED} with MODE {@code plain} or {@code kolo}.
 */
public final class EasyTrainWorker {
    static final float LEARNING_RATE = 0.01f;

    private EasyTrainWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        int steps = Integer.parseInt(args[1]);
        int globalBatch = Integer.parseInt(args[2]);
        boolean plain = args[3].equals("plain");
        long seed = Long.parseLong(args[4]);
        if (plain) {
            train(null, out, steps, globalBatch, seed);
        } else {
            try (Kolo kolo = Kolo.init()) {
                train(kolo, out, steps, globalBatch, seed);
            }
        }
    }

    static void train(Kolo kolo, Path out, int steps, int globalBatch, long seed) throws Exception {
        int rank = kolo == null ? 0 : kolo.rank();
        int size = kolo == null ? 1 : kolo.size();
        int local = globalBatch / size;
        Optimizer adam = Optimizer.adam().optLearningRateTracker(Tracker.fixed(LEARNING_RATE)).build();
        SaveModelTrainingListener save = new SaveModelTrainingListener(out.resolve("model").toString(), "easy") {
            @Override
            protected void saveModel(Trainer trainer) {
                System.out.println("model saved by rank " + rank);
                super.saveModel(trainer);
            }
        };
        TrainingListener announce = new TrainingListenerAdapter() {
            @Override
            public void onEpoch(Trainer trainer) {
                System.out.println("rank-zero listener ran on rank " + rank);
            }
        };
        DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()).optOptimizer(adam)
                .addTrainingListeners(new ValuesWriter(out, rank), new EpochTrainingListener(), save, new LoggingTrainingListener(),
                        KoloTrainer.onRankZero(announce));
        try (Model model = Model.newInstance("test-cnn")) {
            Engine.getInstance().setRandomSeed((int) seed + rank);
            model.setBlock(DjlWorker.network());
            try (Trainer trainer = kolo == null ? model.newTrainer(config) : new KoloTrainer(kolo, model, config);
                 NDManager data = model.getNDManager().newSubManager()) {
                trainer.initialize(new Shape(1, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                float[] x = new float[steps * local * DjlWorker.IMAGE * DjlWorker.IMAGE];
                float[] y = new float[steps * local];
                for (int s = 0; s < steps; s++) {
                    float[] images = DjlWorker.images(s, rank * local, local);
                    System.arraycopy(images, 0, x, s * images.length, images.length);
                    System.arraycopy(DjlWorker.labels(s, rank * local, local), 0, y, s * local, local);
                }
                ArrayDataset shard = new ArrayDataset.Builder()
                        .setData(data.create(x, new Shape(steps * local, 1, DjlWorker.IMAGE, DjlWorker.IMAGE)))
                        .optLabels(data.create(y)).setSampling(local, false).build();
                EasyTrain.fit(trainer, 1, shard, null);
                System.out.println("epochs in result " + trainer.getTrainingResult().getEpoch());
            }
        }
    }

    /** Writes the model's values before every training batch and at the end of the epoch. */
    static final class ValuesWriter extends TrainingListenerAdapter {
        private final Path out;
        private final int rank;
        private int batch;

        ValuesWriter(Path out, int rank) {
            this.out = out;
            this.rank = rank;
        }

        @Override
        public void onTrainingBatch(Trainer trainer, BatchData batchData) {
            write(trainer, "rank-" + rank + "-before-" + batch++ + ".bin");
        }

        @Override
        public void onEpoch(Trainer trainer) {
            write(trainer, "rank-" + rank + "-end.bin");
        }

        private void write(Trainer trainer, String file) {
            try {
                float[] values = DjlWorker.modelValues(trainer.getModel());
                DjlWorker.write(out.resolve(file), values);
                System.out.println(file + " checksum " + DjlWorker.checksum(values));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
