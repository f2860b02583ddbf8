package dev.kolo.elastic.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.elastic.InProcessJob;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.testing.Conditions;
import dev.kolo.testing.StatusJson;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The straggler policies on a real job of three workers in this JVM whose rank 2 takes longer per sample than the
 * others (a timed pause per sample: its speed is then known exactly): {@code rebalance} moves the shares to the
 * speeds while every step still takes the next global batch whole, {@code warn} names the rank on the status page
 * and in the metric and leaves the shares, {@code off} measures nothing.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StragglerPolicyTest {
    private static final int NP = 3;
    private static final int PER_RANK = 32;
    private static final int GLOBAL = PER_RANK * NP;
    private static final int WINDOW = 5;
    private static InProcessJob job;

    @BeforeAll
    static void formJob() throws Exception {
        // Each worker its own metrics port: the status page is served there.
        AtomicInteger port = new AtomicInteger(21000 + 10 * new Random().nextInt(400));
        job = new InProcessJob(NP, b -> b.metricsPort(port.getAndIncrement()));
    }

    @AfterAll
    static void close() {
        job.close();
    }

    /** Per rank: every step's batch, and the shares the sampler held after each step. */
    private record Run(List<int[]> batches, List<int[]> shares, double weight) {
    }

    /** {@code steps} steps; each rank pauses {@code micros} per sample ({@code slowdown} times that on rank 2). */
    private static List<Run> train(StragglerPolicy policy, String name, double slowdown, int micros, int steps)
            throws Exception {
        List<Run> runs = new ArrayList<>(job.onAll(k -> {
            ElasticSampler s = ElasticSampler.builder(k).name(name).split(BatchSplit.equal(PER_RANK)).shuffle(false)
                    .straggler(policy).paceWindow(WINDOW).build();
            double perSample = micros * 1e3 * (k.rank() == 2 ? slowdown : 1);
            Tensor grad = Tensor.allocate(dev.kolo.runtime.DType.FLOAT32, 1024);
            List<int[]> batches = new ArrayList<>();
            List<int[]> shares = new ArrayList<>();
            Iterator<int[]> it = s.batches((long) GLOBAL * (steps + 1));
            for (int step = 0; step < steps; step++) {
                int[] batch = it.next();
                pause((long) (batch.length * perSample));
                k.allreduceInPlace(name + ".grad", grad, ReduceOp.SUM);
                s.stepped();
                batches.add(batch);
                shares.add(s.batchSizes());
            }
            return new Run(batches, shares, s.gradientWeight());
        }));
        List<Run> byRank = new ArrayList<>(runs);
        for (int w = 0; w < NP; w++) {
            byRank.set(job.workers.get(w).rank(), runs.get(w));
        }
        return byRank;
    }

    private static void pause(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    @Test
    void rebalanceMovesShareToTheFasterRanksAndEveryStepStillTakesTheWholeGlobalBatch() throws Exception {
        List<Run> ranks = train(StragglerPolicy.REBALANCE, "rebalance", 1.5, 300, 8 * WINDOW);
        int[] last = ranks.get(0).shares().get(8 * WINDOW - 1);
        for (Run r : ranks) {
            for (int step = 0; step < r.shares().size(); step++) {
                assertArrayEquals(ranks.get(0).shares().get(step), r.shares().get(step), "every rank changes its "
                        + "shares at the same step (step " + step + ")");
            }
        }
        assertEquals(GLOBAL, Arrays.stream(last).sum(), Arrays.toString(last));
        // Speeds 1 : 1 : 1/1.5 give 36 : 36 : 24 of 96; a shared machine's noise moves a sample or two.
        assertTrue(last[2] >= 20 && last[2] <= 28, "the slow rank's share follows its speed: " + Arrays.toString(last));
        assertTrue(last[0] >= 33 && last[1] >= 33, "the fast ranks take the rest: " + Arrays.toString(last));
        for (int r = 0; r < NP; r++) {
            assertEquals((double) last[r] * NP / GLOBAL, ranks.get(r).weight(), 1e-12, "rank " + r + "'s gradient "
                    + "weight is its share over an equal one");
        }
        for (int step = 0; step < 8 * WINDOW; step++) {
            boolean[] seen = new boolean[GLOBAL];
            int taken = 0;
            for (Run r : ranks) {
                for (int i : r.batches().get(step)) {
                    int at = i - step * GLOBAL;
                    assertTrue(at >= 0 && at < GLOBAL && !seen[at], "step " + step + " takes sample " + i + " once, "
                            + "from its own global batch");
                    seen[at] = true;
                    taken++;
                }
            }
            assertEquals(GLOBAL, taken, "step " + step + " takes its whole global batch");
        }
    }

    @Test
    void warnNamesTheSlowRankOnTheStatusPageAndInTheMetricAndLeavesTheShares() throws Exception {
        List<Run> ranks = train(StragglerPolicy.WARN, "warn", 2.0, 200, 4 * WINDOW);
        for (Run r : ranks) {
            assertArrayEquals(new int[] {PER_RANK, PER_RANK, PER_RANK}, r.shares().get(r.shares().size() - 1));
        }
        for (Kolo k : job.workers) {
            double ratio = k.meterRegistry().get("kolo.straggler.ratio").tag("sampler", "warn").gauge().value();
            if (k.rank() == 2) {
                assertTrue(ratio > 1.6 && ratio < 2.5, "rank 2's ratio to the median: " + ratio);
            } else {
                assertTrue(ratio < 1.2, "rank " + k.rank() + "'s ratio to the median: " + ratio);
            }
        }
        String page = job.workers.get(0).jobStatusUrl();
        Conditions.await(() -> paceOf(page, 2).contains("straggler") && !paceOf(page, 0).contains("straggler"),
                () -> "the status page's ranks: " + StatusJson.get(page).getJsonArray("ranks"));
    }

    @Test
    void unsetThePolicyIsWarn() throws Exception {
        // No straggler(...) and no KOLO_STRAGGLER: the sampler a user builds names the slow rank and keeps the shares.
        List<Run> ranks = new ArrayList<>(job.onAll(k -> {
            ElasticSampler s = ElasticSampler.builder(k).name("default").split(BatchSplit.equal(PER_RANK))
                    .shuffle(false).paceWindow(WINDOW).build();
            Tensor grad = Tensor.allocate(dev.kolo.runtime.DType.FLOAT32, 16);
            Iterator<int[]> it = s.batches((long) GLOBAL * (2 * WINDOW + 1));
            for (int step = 0; step < 2 * WINDOW; step++) {
                pause((long) (it.next().length * 200e3 * (k.rank() == 2 ? 2 : 1)));
                k.allreduceInPlace("default.grad", grad, ReduceOp.SUM);
                s.stepped();
            }
            return new Run(List.of(), List.of(s.batchSizes()), s.gradientWeight());
        }));
        for (Run r : ranks) {
            assertArrayEquals(new int[] {PER_RANK, PER_RANK, PER_RANK}, r.shares().get(0));
        }
        for (Kolo k : job.workers) {
            double ratio = k.meterRegistry().get("kolo.straggler.ratio").tag("sampler", "default").gauge().value();
            assertTrue(k.rank() == 2 ? ratio > 1.3 : ratio < 1.3, "rank " + k.rank() + ": " + ratio);
        }
    }

    @Test
    void offMeasuresNothing() throws Exception {
        List<Run> ranks = train(StragglerPolicy.OFF, "off", 2.0, 100, 2 * WINDOW);
        assertArrayEquals(new int[] {PER_RANK, PER_RANK, PER_RANK}, ranks.get(2).shares().get(2 * WINDOW - 1));
        for (Kolo k : job.workers) {
            assertNull(k.meterRegistry().find("kolo.straggler.ratio").tag("sampler", "off").gauge());
        }
    }

    private static String paceOf(String page, int rank) {
        JsonArray rows = StatusJson.get(page).getJsonArray("ranks");
        for (int i = 0; i < rows.size(); i++) {
            JsonObject row = rows.getJsonObject(i);
            if (row.getInteger("rank", -1) == rank) {
                return String.valueOf(row.getString("pace"));
            }
        }
        return "";
    }
}
