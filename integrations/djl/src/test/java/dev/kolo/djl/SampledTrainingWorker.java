package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.listener.TrainingListenerAdapter;
import ai.djl.training.loss.Loss;
import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.testing.StdinWatch;
import java.util.List;
import java.util.StringJoiner;

/**
 * One worker of a test job that trains as a DJL user is told to: a {@link DistributedSampler} on an
 * {@code ArrayDataset}, {@link KoloOptimizer}'s AdamW, a {@link KoloTrainer} registered with an {@link ElasticState}
 * and {@link KoloTrainer#fit} under {@link Elastic#runOrExit}. It prints where it enters the training function
 * ({@code enter run=R gen=G rank=R size=N step=S epoch=E taken=T}) and, for every batch the trainer trained on,
 * the step it belongs to and the indices in the batch as the trainer received them
 * ({@code used run=R gen=G step=S epoch=E idx=I,I,...;}), then {@code done rank=R steps=S checksum=HEX}.
 *
 * <p>Arguments: {@code RUN SAMPLES EPOCHS BATCH COMMIT_EVERY PACE_MS}. {@code PACE_MS} slows each step down, so
 * that a test's kill or newcomer lands inside an epoch. Settings (job, sizes, checkpoint directory) come from
 * {@code KOLO_*}. Ends itself when its standard input closes.
 */
public final class SampledTrainingWorker {
    private SampledTrainingWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        String run = args[0];
        int samples = Integer.parseInt(args[1]);
        int epochs = Integer.parseInt(args[2]);
        int batch = Integer.parseInt(args[3]);
        int commitEvery = Integer.parseInt(args[4]);
        long paceMs = Long.parseLong(args[5]);
        try (Kolo kolo = Kolo.init(); Model model = Model.newInstance("sampled");
             NDManager data = NDManager.newBaseManager()) {
            Engine.getInstance().setRandomSeed(17 + kolo.rank()); // rank 0's start is everyone's
            model.setBlock(new SequentialBlock().add(Linear.builder().setUnits(16).build()).add(Activation::relu)
                    .add(Linear.builder().setUnits(3).build()));
            DistributedSampler sampler = new DistributedSampler(kolo, batch, true, 99);
            ArrayDataset train = new ArrayDataset.Builder().setData(data.create(features(samples),
                    new Shape(samples, 4))).optLabels(data.create(labels(samples))).setSampling(sampler).build();
            long[] gen = new long[1];
            KoloTrainer[] trainerOf = new KoloTrainer[1];
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(KoloOptimizer.koloAdamW().weightDecay(0.01).learningRate(0.01f).build())
                    .addTrainingListeners(new TrainingListenerAdapter() {
                        @Override
                        public void onTrainingBatch(Trainer t, BatchData batchData) {
                            StringJoiner idx = new StringJoiner(",");
                            for (Object i : (List<?>) batchData.getBatch().getIndices()) {
                                idx.add(i.toString());
                            }
                            System.out.println("used run=" + run + " gen=" + gen[0] + " step="
                                    + (trainerOf[0].steps() + 1) + " epoch=" + sampler.epoch() + " idx=" + idx + ";");
                            pause(paceMs);
                        }
                    });
            try (KoloTrainer trainer = new KoloTrainer(kolo, model, config);
                 ElasticState state = ElasticState.builder(kolo).checkpointEvery(1).build()) {
                trainerOf[0] = trainer;
                trainer.initialize(new Shape(1, 4));
                trainer.register(state, sampler).commitEvery(commitEvery);
                Elastic.runOrExit(kolo, state, s -> {
                    gen[0] = kolo.generation();
                    System.out.println("enter run=" + run + " gen=" + gen[0] + " rank=" + kolo.rank() + " size="
                            + kolo.size() + " step=" + trainer.steps() + " epoch=" + sampler.epoch() + " taken="
                            + sampler.samplesTaken());
                    trainer.fit(epochs, train, null);
                    return null;
                });
                System.out.println("done rank=" + kolo.rank() + " steps=" + trainer.steps() + " checksum="
                        + DjlWorker.checksum(DjlWorker.modelValues(model)));
            }
        }
        System.exit(0);
    }

    static float[] features(int samples) {
        float[] x = new float[samples * 4];
        for (int i = 0; i < samples; i++) {
            x[4 * i] = (float) Math.sin(i);
            x[4 * i + 1] = (float) Math.cos(i);
            x[4 * i + 2] = (i % 7) / 7f;
            x[4 * i + 3] = (i % 11) / 11f;
        }
        return x;
    }

    static float[] labels(int samples) {
        float[] y = new float[samples];
        for (int i = 0; i < samples; i++) {
            y[i] = (i % 3 + (i % 7 > 3 ? 1 : 0)) % 3;
        }
        return y;
    }

    private static void pause(long ms) {
        if (ms > 0) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
