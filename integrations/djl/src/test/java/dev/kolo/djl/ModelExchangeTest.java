package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.testing.Conditions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link KoloTrainer} step that stops waiting never has its engine arrays written afterwards: two real workers
 * in this JVM, each with its own DJL model on the PyTorch engine. Rank 0's step is interrupted while rank 1 has
 * not stepped yet; then rank 1 steps, which runs rank 0's side of the exchange too. Rank 0's gradients stay as
 * its backward pass left them (the exchange it gave up on ran on a copy, which rank 1's average shows), and the
 * next step of both ranks starts clean.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ModelExchangeTest {
    private static final long GUARD_SECONDS = 30;
    private static final float LEARNING_RATE = 0.5f;
    private static final List<Kolo> WORKERS = new ArrayList<>();

    @BeforeAll
    static void form() throws Exception {
        System.setProperty("ai.djl.offline", "true");
        String job = "exchange-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 12000 + 20 * (500 + new Random().nextInt(400));
        List<Callable<Kolo>> joins = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            KoloConfig c = KoloConfig.builder().jobName(job).np(2).metricsPort(0).set(Settings.CLUSTER_PORT, port)
                    .rendezvousTimeout(Duration.ofSeconds(60)).build();
            joins.add(() -> Kolo.init(c));
        }
        for (Kolo k : all(joins)) {
            WORKERS.add(k);
        }
        WORKERS.sort(java.util.Comparator.comparingInt(Kolo::rank));
    }

    @AfterAll
    static void leave() {
        WORKERS.parallelStream().forEach(Kolo::close);
    }

    @Test
    void anInterruptedStepNeverWritesTheEnginesGradientsAfterwards() throws Exception {
        try (Rank zero = new Rank(WORKERS.get(0)); Rank one = new Rank(WORKERS.get(1))) {
            all(List.of(zero::initialize, one::initialize));
            zero.backward(); // one after the other: PyTorch collects one gradient tape at a time
            one.backward();
            float[] mine = zero.gradients();
            float[] theirs = one.gradients();
            assertTrue(!java.util.Arrays.equals(mine, theirs), "the ranks' batches give different gradients");

            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread stepper = new Thread(() -> {
                try {
                    zero.trainer.step();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            }, "rank-0-step");
            stepper.start();
            Conditions.await(() -> Conditions.inKolosWait(stepper), "rank 0's step never waited in Kolo");
            stepper.interrupt();
            stepper.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
            assertTrue(!stepper.isAlive(), "rank 0's interrupted step never returned");
            assertInstanceOf(KoloInterruptedException.class, thrown.get());

            // Rank 1's step runs the exchange on both ranks; a later op of both ranks runs after it on rank 0 too.
            one.trainer.step();
            all(List.of(() -> zero.kolo.allreduce("after", Tensor.of(new float[] {1}), ReduceOp.SUM),
                    () -> one.kolo.allreduce("after", Tensor.of(new float[] {1}), ReduceOp.SUM)));
            assertArrayEquals(mine, zero.gradients(), 0f, "the exchange rank 0 gave up on wrote its gradients");
            // Rank 1 stepped by the average of both ranks' gradients: plain SGD, so its update shows the average.
            for (int i = 0; i < mine.length; i++) {
                double averaged = (one.valuesBefore[i] - one.valuesAfter[i]) / LEARNING_RATE;
                assertEquals((mine[i] + theirs[i]) / 2, averaged, 1e-4, "rank 1's average, value " + i);
            }

            // The next step of both ranks starts clean and leaves them equal.
            zero.resetToTheOthers(one);
            zero.backward();
            one.backward();
            all(List.of(() -> {
                zero.trainer.step();
                return null;
            }, () -> {
                one.trainer.step();
                return null;
            }));
            assertArrayEquals(one.values(), zero.values(), 0f, "the ranks after the next step");
        }
    }

    /** One rank's model and trainer; its step records the averaged gradients before DJL's optimizer runs. */
    private static final class Rank implements AutoCloseable {
        final Kolo kolo;
        final Model model = Model.newInstance("exchange");
        final Trainer trainer;
        float[] valuesBefore;
        float[] valuesAfter;

        Rank(Kolo kolo) {
            this.kolo = kolo;
            Engine.getInstance().setRandomSeed(3 + kolo.rank());
            model.setBlock(new SequentialBlock().add(Blocks.batchFlattenBlock())
                    .add(Linear.builder().setUnits(8).build()).add(Linear.builder().setUnits(3).build()));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(LEARNING_RATE)).build());
            this.trainer = new KoloTrainer(kolo, model, config) {
                @Override
                public void step() {
                    valuesBefore = values();
                    super.step();
                    valuesAfter = values();
                }
            };
        }

        Void initialize() {
            trainer.initialize(new Shape(1, 4));
            return null;
        }

        Void backward() {
            try (NDManager batch = trainer.getManager().newSubManager();
                 GradientCollector gc = trainer.newGradientCollector()) {
                Random r = new Random(kolo.rank());
                float[] x = new float[4 * 4];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) r.nextGaussian();
                }
                NDArray input = batch.create(x, new Shape(4, 4));
                NDArray labels = batch.create(new float[] {0, 1, 2, kolo.rank()});
                gc.backward(trainer.getLoss().evaluate(new NDList(labels), trainer.forward(new NDList(input))));
            }
            return null;
        }

        float[] gradients() {
            List<Float> all = new ArrayList<>();
            for (var p : model.getBlock().getParameters()) {
                try (NDArray g = p.getValue().getArray().getGradient()) {
                    for (float v : g.toFloatArray()) {
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

        float[] values() {
            return DjlWorker.modelValues(model);
        }

        /** Rank 0 skipped the step rank 1 took: it takes rank 1's values, so that both step from the same model. */
        void resetToTheOthers(Rank other) {
            var mine = model.getBlock().getParameters();
            var theirs = other.model.getBlock().getParameters();
            for (int i = 0; i < mine.size(); i++) {
                mine.valueAt(i).getArray().set(java.nio.FloatBuffer.wrap(theirs.valueAt(i).getArray().toFloatArray()));
            }
        }

        @Override
        public void close() {
            trainer.close();
            model.close();
        }
    }



    /** Runs {@code tasks} concurrently, one thread each (as the ranks' training loops would); results in order. */
    private static <T> List<T> all(List<Callable<T>> tasks) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            List<T> out = new ArrayList<>();
            for (Future<T> f : pool.invokeAll(tasks, 120, TimeUnit.SECONDS)) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
