package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.train.Adam;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.UpdateRule;
import dev.kolo.testing.StdinWatch;

/**
 * One worker of an elastic test job: the BatchNorm network of {@link DjlWorker} trained with Kolo's {@link Adam}
 * through a {@link DistributedTrainer} under {@link Elastic#runOrExit}, committing after every step. After each
 * step it prints {@code state step=S rank=R size=N model=HEX moments=HEX} (the model's arrays as the engine holds
 * them, buffers included; Adam's moments and step counts), so that a test can compare a worker admitted into the
 * job with the others. The global batch (12 examples) is split evenly over the ranks of the moment.
 *
 * <p>Arguments: {@code STEPS SLEEP_MS SEED}: it trains until it has taken 5 steps at {@code KOLO_MAX_NP} workers, or
 * {@code STEPS} steps in all. Ends itself when its standard input closes.
 */
public final class ElasticDjlWorker {
    static final int GLOBAL_BATCH = 12;

    private ElasticDjlWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        long steps = Long.parseLong(args[0]);
        long sleepMs = Long.parseLong(args[1]);
        long seed = Long.parseLong(args[2]);
        System.setProperty("kolo.test.network", "batchnorm");
        Adam adam = new Adam(0);
        try (Kolo kolo = Kolo.init(); Model model = Model.newInstance("elastic-cnn")) {
            Engine.getInstance().setRandomSeed((int) seed + kolo.rank());
            model.setBlock(DjlWorker.network());
            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()));
                 ElasticState state = ElasticState.builder(kolo).build()) {
                trainer.initialize(new Shape(1, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                DistributedTrainer dist = DistributedTrainer.builder(kolo, model).updateRule(adam).build();
                dist.register(state);
                state.value("step", 0L).value("atMax", 0L);
                int maxNp = kolo.config().get(Settings.MAX_NP);
                Elastic.runOrExit(kolo, state, s -> {
                    dist.loadParameters(); // the state was synced or restored: Kolo's copy is the truth
                    for (long step = s.longValue("step"); step < steps && s.longValue("atMax") < 5; step++) {
                        int size = kolo.size();
                        int first = kolo.rank() * GLOBAL_BATCH / size;
                        int count = (kolo.rank() + 1) * GLOBAL_BATCH / size - first;
                        try (NDManager batch = trainer.getManager().newSubManager()) {
                            NDArray x = batch.create(DjlWorker.images((int) step, first, count),
                                    new Shape(count, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                            NDArray y = batch.create(DjlWorker.labels((int) step, first, count));
                            try (GradientCollector gc = trainer.newGradientCollector()) {
                                gc.backward(trainer.getLoss().evaluate(new NDList(y),
                                        trainer.forward(new NDList(x))));
                            }
                        }
                        dist.step(0.01);
                        s.set("step", step + 1);
                        if (size == maxNp) {
                            s.set("atMax", s.longValue("atMax") + 1);
                        }
                        s.commit();
                        System.out.println("state step=" + (step + 1) + " rank=" + kolo.rank() + " size=" + size
                                + " model=" + DjlWorker.checksum(DjlWorker.modelValues(model)) + " moments="
                                + moments(adam, dist));
                        pause(sleepMs);
                    }
                    return null;
                });
                System.out.println("done rank=" + kolo.rank());
            }
        }
        System.exit(0);
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A checksum of every state array the rule keeps (first and second moments, step counts). */
    static String moments(UpdateRule rule, DistributedTrainer dist) {
        long[] h = {1125899906842597L};
        for (Parameter p : dist.parameters()) {
            rule.state(p, new UpdateRule.StateSink() {
                @Override
                public void floats(String name, float[] live, long[] shape) {
                    for (float v : live) {
                        h[0] = 31 * h[0] + Float.floatToRawIntBits(v);
                    }
                }

                @Override
                public void longs(String name, long[] live, long[] shape) {
                    for (long v : live) {
                        h[0] = 31 * h[0] + v;
                    }
                }
            });
        }
        return Long.toHexString(h[0]);
    }
}
