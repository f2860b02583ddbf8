package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;
import ai.djl.training.tracker.Tracker;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.testing.DoubleAdam;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Kolo's update rules as DJL optimizers: each against its double-precision reference over steps with a learning
 * rate that follows DJL's tracker and the parameter's own update count, the gradient cleared after each update, and, through a {@link KoloTrainer} with a
 * registered {@link ElasticState}, a restore takes the weights and the optimizer's moments back to the commit so
 * that the steps after it are taken again bit for bit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KoloOptimizerTest {
    /** The rate grows with the update count, so a count that is not the parameter's own shows. */
    static final Tracker RATE = new Tracker() {
        @Override
        public float getNewValue(int numUpdate) {
            return 0.01f * (1 + numUpdate);
        }
    };

    @BeforeAll
    static void offline() {
        System.setProperty("ai.djl.offline", "true");
    }

    @Test
    void sgdWithMomentumMatchesItsDoubleReference() {
        float[] start = values(37, 1);
        double[] w = new double[37];
        double[] v = new double[37];
        for (int i = 0; i < w.length; i++) {
            w[i] = start[i];
        }
        float[] actual = run(KoloOptimizer.koloSgd().momentum(0.9).weightDecay(0.01).learningRate(RATE).build(),
                start, new Shape(37), (g, lr) -> {
                    for (int i = 0; i < w.length; i++) {
                        v[i] = 0.9 * v[i] + g[i] + 0.01 * w[i];
                        w[i] -= lr * v[i];
                    }
                });
        assertNear(w, actual, "sgd");
    }

    @Test
    void adamAdamWAndLambMatchTheirDoubleReferences() {
        Object[][] cases = {
            {KoloOptimizer.koloAdam().weightDecay(0.01), DoubleAdam.Kind.ADAM, 0.01},
            {KoloOptimizer.koloAdamW().weightDecay(0.1), DoubleAdam.Kind.ADAMW, 0.1},
            {KoloOptimizer.koloLamb().weightDecay(0.01), DoubleAdam.Kind.LAMB, 0.01}};
        for (Object[] c : cases) {
            float[] start = values(35, 2);
            DoubleAdam reference = new DoubleAdam((DoubleAdam.Kind) c[1], 0.9, 0.999, 1e-8, (double) c[2], start);
            KoloOptimizer optimizer = ((KoloOptimizer.Builder) c[0]).learningRate(RATE).build();
            float[] actual = run(optimizer, start, new Shape(5, 7), reference::step);
            assertNear(reference.w, actual, c[1].toString());
        }
    }

    @Test
    void settingsOfAnotherRuleAreRefusedByName() {
        assertTrue(assertThrows(IllegalStateException.class, () -> KoloOptimizer.koloAdam().momentum(0.9))
                .getMessage().contains("momentum is not a setting of adam"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> KoloOptimizer.koloSgd().momentum(1).build())
                .getMessage().contains("momentum"));
    }

    /** Twelve updates of one parameter through {@code optimizer}; the reference takes the same gradients and rates. */
    static float[] run(KoloOptimizer optimizer, float[] start, Shape shape, Reference reference) {
        try (NDManager manager = Engine.getEngine("PyTorch").newBaseManager()) {
            NDArray weight = manager.create(start, shape);
            weight.setRequiresGradient(true);
            for (int step = 0; step < 12; step++) {
                float[] g = values(start.length, 100 + step);
                // The gradient of sum(w * g) is g, added by the engine to what the parameter's gradient holds: the
                // optimizer must leave it cleared, as DJL's do.
                try (GradientCollector gc = Engine.getEngine("PyTorch").newGradientCollector()) {
                    gc.backward(weight.mul(manager.create(g, shape)).sum());
                }
                optimizer.update("p", weight, weight.getGradient());
                reference.step(g, 0.01f * (1 + step));
            }
            return weight.toFloatArray();
        }
    }

    interface Reference {
        void step(float[] gradient, double rate);
    }

    static float[] values(int n, long seed) {
        Random r = new Random(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (r.nextGaussian() * Math.pow(10, -3 + 3 * r.nextDouble()));
        }
        return v;
    }

    static void assertNear(double[] expected, float[] actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            double tolerance = 1e-5 * Math.abs(expected[i]) + 1e-6;
            assertEquals(expected[i], actual[i], tolerance, what + " element " + i);
        }
    }

    @Test
    void aRestoreTakesTheWeightsAndTheMomentsBackSoTheStepsAfterTheCommitRepeatBitForBit() throws Exception {
        String job = "optimizer-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 14000 + 20 * new Random().nextInt(400);
        try (Kolo kolo = Kolo.init(KoloConfig.builder().jobName(job).np(1).metricsPort(0).set(Settings.CLUSTER_PORT, port).build());
             Model model = Model.newInstance("restore")) {
            Engine.getEngine("PyTorch").setRandomSeed(5);
            model.setBlock(new SequentialBlock().add(Linear.builder().setUnits(8).build()).add(Activation::relu)
                    .add(Linear.builder().setUnits(3).build()));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(KoloOptimizer.koloAdamW().weightDecay(0.05).learningRate(0.01f).build());
            try (KoloTrainer trainer = new KoloTrainer(kolo, model, config);
                 ElasticState state = ElasticState.builder(kolo).build()) {
                trainer.initialize(new Shape(4, 6));
                trainer.register(state).commitEvery(0);
                for (int step = 0; step < 3; step++) {
                    step(trainer, step);
                }
                state.commit();
                float[] atCommit = DjlWorker.modelValues(model);
                float[][] after = new float[2][];
                for (int step = 3; step < 5; step++) {
                    step(trainer, step);
                    after[step - 3] = DjlWorker.modelValues(model);
                }
                assertEquals(5, trainer.steps());
                state.restore();
                assertArrayEquals(atCommit, DjlWorker.modelValues(model), "the weights are the commit's");
                assertEquals(3, trainer.steps(), "the step count is the commit's");
                for (int step = 3; step < 5; step++) {
                    step(trainer, step);
                    assertArrayEquals(after[step - 3], DjlWorker.modelValues(model),
                            "step " + step + " again, bit for bit (moments and update counts restored)");
                }
                assertFalse(java.util.Arrays.equals(atCommit, after[1]), "the steps moved the weights");
            }
        }
    }

    /** One step on a fixed batch of its own. */
    static void step(KoloTrainer trainer, int step) {
        try (NDManager batch = trainer.getManager().newSubManager()) {
            NDArray x = batch.create(values(24, 10 + step), new Shape(4, 6));
            NDArray y = batch.create(new float[] {0, 1, 2, step % 3});
            try (GradientCollector gc = trainer.newGradientCollector()) {
                gc.backward(trainer.getLoss().evaluate(new NDList(y), trainer.forward(new NDList(x))));
            }
            trainer.step();
        }
    }
}
