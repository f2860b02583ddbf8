package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.testing.Conditions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The optimizer on a real three-worker job in this JVM, shared by all cases. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedOptimizerTest {
    private static final int NP = 3;
    private static InJvmJob job;

    @BeforeAll
    static void formJob() throws Exception {
        job = InJvmJob.form("train", NP, b -> b);
    }

    @AfterAll
    static void leave() {
        if (job != null) {
            job.close();
        }
    }

    /** Gradient of rank r, pass p, element i: distinct per rank and pass so averaging is visible. */
    private static float grad(int rank, int pass, int i) {
        return (rank + 1) * 0.5f + pass * 0.25f + i * 0.125f;
    }

    private static float[] expectedMean(int passes, int n) {
        float[] e = new float[n];
        for (int i = 0; i < n; i++) {
            double sum = 0;
            for (int r = 0; r < NP; r++) {
                for (int p = 0; p < passes; p++) {
                    sum += grad(r, p, i);
                }
            }
            e[i] = (float) (sum / (NP * passes));
        }
        return e;
    }

    /** Runs {@code steps} steps of {@code passes} passes on two parameters; returns each rank's values. */
    private static List<float[][]> train(String prefix, Compression c, int passes, int steps, double lr)
            throws Exception {
        return job.onAll(kolo -> {
            int rank = kolo.rank();
            Parameter a = Parameter.of("a", new float[] {rank, rank, rank, rank}, new float[4], 2, 2);
            Parameter b = Parameter.of("b", new float[1000], new float[1000]);
            DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(a, b)).namePrefix(prefix)
                    .compression(c).backwardPassesPerStep(passes).updateRule(new Sgd(0, 0)).build();
            opt.broadcastParameters(0);
            assertArrayEquals(new float[4], a.values(), "rank 0's initial values everywhere");
            for (int s = 0; s < steps; s++) {
                for (int p = 0; p < passes; p++) {
                    for (Parameter q : List.of(b, a)) {   // backward order: reported as they are "computed"
                        for (int i = 0; i < q.size(); i++) {
                            q.gradient()[i] = grad(rank, p, i);
                        }
                        opt.gradientReady(q);
                    }
                    boolean updated = opt.step(lr);
                    assertEquals(p == passes - 1, updated);
                }
            }
            assertEquals((long) steps * passes, opt.passes());
            assertEquals(steps, opt.steps());
            return new float[][] {a.values().clone(), b.values().clone(), b.gradient().clone()};
        });
    }

    @Test
    void averagesGradientsOverRanksAndUpdatesIdentically() throws Exception {
        List<float[][]> r = train("plain.", Compression.NONE, 1, 2, 0.5);
        float[] mean = expectedMean(1, 1000);
        for (float[][] rank : r) {
            assertArrayEquals(mean, rank[2], 1e-6f);
            for (int i = 0; i < 1000; i++) {
                assertEquals(-2 * 0.5f * mean[i], rank[1][i], 1e-5f);
            }
            assertArrayEquals(r.get(0)[0], rank[0], 0f);
            assertArrayEquals(r.get(0)[1], rank[1], 0f);
        }
    }

    /**
     * Rank r trains on r + 1 of a global batch of 6 examples (1, 2, 3): weighted by their shares the ranks' mean
     * gradients average to the global batch's mean gradient, the one a single process computes over all 6.
     */
    @Test
    void unequalBatchesWeightedByTheirSharesGiveTheGlobalBatchsMeanGradient() throws Exception {
        int global = 6;
        List<float[]> r = job.onAll(kolo -> {
            int rank = kolo.rank();
            int n = rank + 1;
            Parameter w = Parameter.of("w", new float[64], new float[64]);
            DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(w)).namePrefix("weighted.")
                    .gradientWeight((double) n * NP / global).build();
            int first = rank * (rank + 1) / 2; // ranks hold examples 0, 1-2, 3-5 of the batch
            for (int i = 0; i < 64; i++) {
                double sum = 0;
                for (int e = first; e < first + n; e++) {
                    sum += example(e, i);
                }
                w.gradient()[i] = (float) (sum / n); // this rank's mean gradient
            }
            opt.gradientReady(w);
            opt.synchronize();
            return w.gradient().clone();
        });
        for (int i = 0; i < 64; i++) {
            double sum = 0;
            for (int e = 0; e < global; e++) {
                sum += example(e, i);
            }
            float single = (float) (sum / global);
            for (float[] rank : r) {
                assertEquals(single, rank[i], Math.ulp(single) * 4, "element " + i);
            }
        }
        assertArrayEquals(r.get(0), r.get(2), 0f, "every rank alike");
        float[] unweighted = expectedUnweighted(global);
        assertTrue(Math.abs(unweighted[1] - r.get(0)[1]) > 1e-3, "the plain mean of the ranks' means differs");
    }

    /** Example e's gradient at element i. */
    private static double example(int e, int i) {
        return Math.sin(e * 1.7 + i * 0.3) + e * 0.5;
    }

    /** The mean of the three ranks' means, unweighted. */
    private static float[] expectedUnweighted(int global) {
        float[] out = new float[64];
        for (int i = 0; i < 64; i++) {
            double sum = 0;
            for (int rank = 0; rank < NP; rank++) {
                int first = rank * (rank + 1) / 2;
                double s = 0;
                for (int e = first; e < first + rank + 1; e++) {
                    s += example(e, i);
                }
                sum += s / (rank + 1);
            }
            out[i] = (float) (sum / NP);
        }
        return out;
    }

    @Test
    void accumulatesBackwardPassesBeforeExchanging() throws Exception {
        List<float[][]> r = train("accum.", Compression.NONE, 3, 1, 1.0);
        float[] mean = expectedMean(3, 1000);
        for (float[][] rank : r) {
            assertArrayEquals(mean, rank[2], 1e-5f);
        }
    }

    @Test
    void halfPrecisionCompressionStaysCloseAndIdentical() throws Exception {
        float[] mean = expectedMean(1, 1000);
        for (Compression c : new Compression[] {Compression.FP16, Compression.BF16}) {
            List<float[][]> r = train(c + ".", c, 1, 1, 1.0);
            float tolerance = c == Compression.FP16 ? 1e-3f : 1e-2f;
            for (float[][] rank : r) {
                for (int i = 0; i < 1000; i++) {
                    assertEquals(mean[i], rank[2][i], Math.abs(mean[i]) * tolerance, c + " element " + i);
                }
                assertArrayEquals(r.get(0)[1], rank[1], 0f, "ranks must agree bit for bit");
            }
            assertFalse(java.util.Arrays.equals(mean, r.get(0)[2]) && c == Compression.BF16,
                    "bf16 must actually round");
        }
    }

    /** With Adasum the update is the learning rate times the Adasum of the ranks' (pass-averaged) gradients. */
    @Test
    void adasumCombinesTheRanksGradients() throws Exception {
        int passes = 2;
        List<float[][]> r = job.onAll(kolo -> {
            int rank = kolo.rank();
            Parameter w = Parameter.of("w", new float[100], new float[100]);
            DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(w)).namePrefix("adasum.")
                    .reduceOp(ReduceOp.ADASUM).backwardPassesPerStep(passes).build();
            for (int p = 0; p < passes; p++) {
                for (int i = 0; i < 100; i++) {
                    w.gradient()[i] = adasumGrad(rank, p, i);
                }
                opt.gradientReady(w);
                opt.step(1.0);
            }
            return new float[][] {w.values().clone()};
        });
        double[][] perRank = new double[NP][100];
        for (int rank = 0; rank < NP; rank++) {
            for (int i = 0; i < 100; i++) {
                perRank[rank][i] = ((double) adasumGrad(rank, 0, i) + adasumGrad(rank, 1, i)) / passes;
            }
        }
        double[] combined = dev.kolo.testing.AdasumReference.of(perRank);
        for (float[][] rank : r) {
            for (int i = 0; i < 100; i++) {
                assertEquals(-combined[i], rank[0][i], 1e-5, "element " + i);
            }
            assertArrayEquals(r.get(0)[0], rank[0], 0f, "ranks must agree bit for bit");
        }
        assertThrows(IllegalArgumentException.class, () -> DistributedOptimizer.builder(job.workers.get(0), List.of())
                .reduceOp(ReduceOp.MAX));
    }

    /** Gradients that share a direction (so Adasum differs from both sum and mean), distinct per rank and pass. */
    private static float adasumGrad(int rank, int pass, int i) {
        return (float) (Math.sin(i) * (1 + rank) + 0.1 * Math.cos(7 * i + rank) + pass * 0.05);
    }

    @Test
    void unreportedGradientsAreExchangedAtTheStep() throws Exception {
        List<float[]> r = job.onAll(kolo -> {
            Parameter p = Parameter.of("p", new float[8], new float[8]);
            DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(p)).namePrefix("late.").build();
            java.util.Arrays.fill(p.gradient(), kolo.rank());
            assertTrue(opt.synchronize());
            return p.gradient().clone();
        });
        for (float[] g : r) {
            assertArrayEquals(new float[] {1, 1, 1, 1, 1, 1, 1, 1}, g, 0f);
        }
    }

    /**
     * The reported defect: a step whose wait was interrupted left its other exchanges submitted, and the next step
     * failed on their names ("already in flight"), or took their late results. Rank 0's step is interrupted while
     * the other ranks have not stepped yet, and it steps again at once; the others then take both steps. Rank 0's
     * second step waits for the first step's exchanges, then averages the second step's gradients with everyone's;
     * the others' first step averaged rank 0's first gradients, as they were when it gave up.
     */
    @Test
    void aStepAfterAnInterruptedStepStartsClean() throws Exception {
        java.util.concurrent.CountDownLatch othersGo = new java.util.concurrent.CountDownLatch(1);
        List<float[][]> r = job.onAll(kolo -> {
            int rank = kolo.rank();
            Parameter a = Parameter.of("a", new float[4], new float[4]);
            Parameter b = Parameter.of("b", new float[1000], new float[1000]);
            DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(a, b)).namePrefix("interrupted.")
                    .build();
            float[][] out = {null, null, {rank}};
            if (rank == 0) {
                Thread trainer = Thread.currentThread();
                java.util.concurrent.atomic.AtomicBoolean secondStepOver = new java.util.concurrent.atomic.AtomicBoolean();
                java.util.concurrent.CountDownLatch caught = new java.util.concurrent.CountDownLatch(1);
                Thread watcher = new Thread(() -> {
                    try {
                        Conditions.await(() -> Conditions.inKolosWait(trainer), "rank 0's step never waited in Kolo");
                        trainer.interrupt();
                        caught.await();
                        // The second step waits for the others (fixed) or has failed already (the defect).
                        Conditions.await(() -> secondStepOver.get() || Conditions.inKolosWait(trainer),
                                "rank 0's second step neither waited nor ended");
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        othersGo.countDown();
                    }
                }, "interrupter");
                watcher.start();
                report(rank, 0, opt, b, a);
                assertThrows(dev.kolo.runtime.KoloInterruptedException.class, () -> opt.step(0));
                assertTrue(Thread.interrupted(), "the interrupt status was kept (and is cleared here)");
                caught.countDown();
                try {
                    report(rank, 1, opt, b, a);
                    assertTrue(opt.step(0));
                } finally {
                    secondStepOver.set(true);
                }
                out[1] = b.gradient().clone();
            } else {
                try {
                    assertTrue(othersGo.await(60, TimeUnit.SECONDS), "rank 0 never let the others go");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                report(rank, 0, opt, b, a);
                assertTrue(opt.step(0));
                out[0] = b.gradient().clone();
                report(rank, 1, opt, b, a);
                assertTrue(opt.step(0));
                out[1] = b.gradient().clone();
            }
            return out;
        });
        float[] first = new float[1000];
        float[] second = new float[1000];
        for (int i = 0; i < 1000; i++) {
            double f = 0;
            double g = 0;
            for (int rank = 0; rank < NP; rank++) {
                f += grad(rank, 0, i);
                g += grad(rank, 1, i);
            }
            first[i] = (float) (f / NP);
            second[i] = (float) (g / NP);
        }
        for (float[][] worker : r) {
            int rank = (int) worker[2][0];
            if (rank > 0) {
                assertArrayEquals(first, worker[0], 1e-6f, "rank " + rank + "'s first step");
            }
            assertArrayEquals(second, worker[1], 1e-6f, "rank " + rank + "'s second step");
        }
    }

    /** Pass {@code pass}'s gradients, reported in the order given. */
    private static void report(int rank, int pass, DistributedOptimizer opt, Parameter... order) {
        for (Parameter q : order) {
            for (int i = 0; i < q.size(); i++) {
                q.gradient()[i] = grad(rank, pass, i);
            }
            opt.gradientReady(q);
        }
    }



    @Test
    void rejectsMisuse() {
        Kolo kolo = job.workers.get(0);
        Parameter p = Parameter.of("p", new float[2], new float[2]);
        assertThrows(IllegalArgumentException.class, () -> DistributedOptimizer.builder(kolo,
                List.of(p, Parameter.of("p", new float[1], new float[1]))));
        assertThrows(IllegalArgumentException.class, () -> DistributedOptimizer.builder(kolo, List.of(p))
                .backwardPassesPerStep(0));
        DistributedOptimizer opt = DistributedOptimizer.builder(kolo, List.of(p)).backwardPassesPerStep(2).build();
        assertThrows(IllegalArgumentException.class, () -> opt.gradientReady(Parameter.of("q", new float[1],
                new float[1])));
        opt.gradientReady(p); // first of two passes: local accumulation only
        assertThrows(IllegalArgumentException.class, () -> opt.gradientReady(p));
        assertThrows(IllegalArgumentException.class, () -> Parameter.of("x", new float[4], new float[4], 3));
        String negative = assertThrows(IllegalArgumentException.class, () -> opt.setGradientWeight(-0.5))
                .getMessage();
        assertTrue(negative.contains("0 or more") && negative.contains("n_i * size / N"), negative);
        String adasum = assertThrows(IllegalArgumentException.class, () -> DistributedOptimizer.builder(kolo,
                List.of(p)).reduceOp(ReduceOp.ADASUM).gradientWeight(2).build()).getMessage();
        assertTrue(adasum.contains("needs AVERAGE or SUM"), adasum);
        assertEquals(1, opt.gradientWeight(), "a refused weight leaves the last one");
    }

    @Test
    void sgdWithMomentumAndWeightDecay() {
        Parameter p = Parameter.of("w", new float[] {1f}, new float[] {0.5f});
        Sgd sgd = new Sgd(0.9, 0.1);
        sgd.apply(p, 0.1);           // v = 0.5 + 0.1 = 0.6; w = 1 - 0.06
        assertEquals(0.94f, p.values()[0], 1e-6f);
        sgd.apply(p, 0.1);           // v = 0.54 + 0.5 + 0.094 = 1.134; w = 0.94 - 0.1134
        assertEquals(0.8266f, p.values()[0], 1e-6f);
        assertEquals(1.134f, sgd.velocity(p)[0], 1e-6f);
    }
}
