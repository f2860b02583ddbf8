package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A long job that names its tensors by step ({@code "fresh." + step}) on a real two-worker job in this JVM: what
 * a rank keeps per tensor name stays bounded after many thousands of new names, however many it has seen (the
 * coordinator's side is {@code NegotiatorTest.remembersOnlyTheAnswersSomeRankMayNotHoldYet}, the timeline's
 * {@code ChromeTraceTimelineTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class FreshNamesTest {
    private static final int CAPACITY = 16;
    private LocalJob job;
    private List<Kolo> byRank;

    @BeforeAll
    void form() {
        String name = LocalJob.uniqueName("fresh");
        job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).set(Settings.CACHE_CAPACITY, CAPACITY)
                .set(Settings.STALL_WARNING, Duration.ofSeconds(1)).set(Settings.STALL_SHUTDOWN, Duration.ofSeconds(2)).build());
        byRank = job.byRank();
    }

    @AfterAll
    void close() {
        if (job != null) {
            job.close();
        }
    }

    @Test
    void namesByStepKeepEveryPerNameStructureBounded() throws Exception {
        int names = 6000;
        for (int first = 0; first < names; first += 500) {
            int from = first;
            for (List<Tensor> results : job.onAll(k -> {
                List<CompletableFuture<Tensor>> fs = new ArrayList<>();
                for (int i = from; i < from + 500; i++) {
                    fs.add(k.allreduceAsync("fresh." + i, Tensor.of(new float[] {i}, 1), ReduceOp.SUM));
                }
                List<Tensor> out = new ArrayList<>();
                fs.forEach(f -> out.add(f.join()));
                return out;
            })) {
                for (int i = 0; i < results.size(); i++) {
                    assertArrayEquals(new float[] {2f * (from + i)}, results.get(i).toFloatArray(), 0f);
                }
            }
        }
        for (Kolo k : byRank) {
            Map<String, Integer> sizes = k.perNameSizes();
            assertTrue(sizes.get("names") <= Math.max(1024, CAPACITY), "rank " + k.rank() + ": " + sizes);
            assertTrue(sizes.get("cache") <= CAPACITY, "rank " + k.rank() + ": " + sizes);
            assertEquals(0, sizes.get("unanswered"), "rank " + k.rank() + ": " + sizes);
            assertEquals(0, sizes.get("responses"), "rank " + k.rank() + ": " + sizes);
        }
    }

    /**
     * Names only rank 0 submits fail on both ranks at the stall shutdown; rank 1, which never submits them,
     * remembers the newest of them only (to fail a late submit at once), not every one.
     */
    @Test
    void stalledNamesARankNeverSubmitsAreNotKeptForEver() throws Exception {
        int names = 1500;
        List<CompletableFuture<Tensor>> fs = new ArrayList<>();
        for (int i = 0; i < names; i++) {
            fs.add(byRank.get(0).allreduceAsync("stalled." + i, Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
        }
        for (CompletableFuture<Tensor> f : fs) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("stalled"), e.getCause().getMessage());
        }
        // Rank 1 runs the error responses in the same order; a blocking op of both ranks after them is run after.
        job.onAll(k -> k.allreduce("after-stalls", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
        Map<String, Integer> sizes = byRank.get(1).perNameSizes();
        assertTrue(sizes.get("stalled") <= 1024, "rank 1 remembers " + sizes.get("stalled") + " stalled names");
        assertTrue(sizes.get("stalled") > 0, "rank 1 remembers the newest stalled names: " + sizes);
        // The newest is still refused at once on rank 1, as a late submit of a stalled tensor is.
        ExecutionException late = assertThrows(ExecutionException.class, () -> byRank.get(1)
                .allreduceAsync("stalled." + (names - 1), Tensor.of(new float[] {1}, 1), ReduceOp.SUM)
                .get(60, TimeUnit.SECONDS));
        assertTrue(late.getCause().getMessage().contains("stalled"), late.getCause().getMessage());
    }
}
