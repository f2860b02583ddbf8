package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Steps of more named tensors than the cache holds: around the capacity and far beyond it, the set changing
 * between steps (names added, removed, reordered). Every result is right and the coordinator drops nothing (a
 * dropped request would hang the step until the class's timeout). How fast the steps are is measured by
 * {@code worker.jar bench tensors}, not asserted here. A small cache keeps it fast; one case runs the default
 * cache with 5000 tensors per step.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ManyTensorsTest {
    private static final int CAPACITY = 16;
    private final Map<Integer, LocalJob> jobs = new ConcurrentHashMap<>();

    private List<Kolo> ranks(int size) {
        LocalJob job = jobs.computeIfAbsent(size, n -> {
            String name = LocalJob.uniqueName("many");
            return LocalJob.start(name, n, i -> LocalJob.config(name, n).set(Settings.CACHE_CAPACITY, CAPACITY).build());
        });
        return job.byRank();
    }

    @AfterAll
    void close() {
        jobs.values().parallelStream().forEach(LocalJob::close);
    }

    /**
     * The names of step {@code s} of a run of {@code n} tensors: step 0 has them in order; later steps drop one,
     * add a new one and shuffle (the same way on every rank; each rank then submits in an order of its own).
     */
    private static List<String> names(String prefix, int n, int s) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add(prefix + i);
        }
        if (s > 0) {
            names.remove(s % n);
            names.add(prefix + "new" + s);
            Collections.shuffle(names, new Random(s));
        }
        return names;
    }

    private static float value(int rank, int step, String name, int element) {
        return (name.hashCode() & 0xff) + 3 * rank + step + (element % 5);
    }

    /** One step on every rank, every result checked against a double-precision sum. */
    private static void step(List<Kolo> ranks, List<String> names, int s, int elements) throws Exception {
        List<List<float[]>> results = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            List<String> order = new ArrayList<>(names);
            Collections.shuffle(order, new Random(31L * s + r));
            List<CompletableFuture<Tensor>> fs = new ArrayList<>();
            for (String name : order) {
                float[] v = new float[elements];
                for (int e = 0; e < elements; e++) {
                    v[e] = value(r, s, name, e);
                }
                fs.add(k.allreduceAsync(name, Tensor.of(v, elements), ReduceOp.SUM));
            }
            List<float[]> out = new ArrayList<>(Collections.nCopies(names.size(), null));
            for (int i = 0; i < order.size(); i++) {
                out.set(names.indexOf(order.get(i)), fs.get(i).join().toFloatArray());
            }
            return out;
        });
        for (int r = 0; r < ranks.size(); r++) {
            assertEquals(names.size(), results.get(r).size(), "results on rank " + r + " of step " + s);
        }
        for (int i = 0; i < names.size(); i++) {
            // The reference sum in double precision; the values are small integers, so float sums them exactly.
            float[] expected = new float[elements];
            for (int e = 0; e < elements; e++) {
                double sum = 0;
                for (int r = 0; r < ranks.size(); r++) {
                    sum += value(r, s, names.get(i), e);
                }
                expected[e] = (float) sum;
            }
            for (int r = 0; r < ranks.size(); r++) {
                assertArrayEquals(expected, results.get(r).get(i), names.get(i) + " of step " + s + " on rank " + r);
            }
        }
    }

    private static double dropped(List<Kolo> ranks) {
        return ranks.stream().mapToDouble(k -> k.meterRegistry().find("kolo.control.dropped").counters().stream()
                .mapToDouble(c -> c.count()).sum()).sum();
    }

    @ParameterizedTest(name = "capacity 16, 15 to 320 tensors per step, ring of {0}")
    @ValueSource(ints = {2, 3})
    void stepsAroundAndFarBeyondTheCapacity(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        for (int n : new int[] {CAPACITY - 1, CAPACITY, CAPACITY + 1, 2 * CAPACITY, 5 * CAPACITY, 20 * CAPACITY}) {
            for (int s = 0; s < 4; s++) {
                step(ranks, names("n" + n + ".", n, s), s, 5);
            }
        }
        assertEquals(0.0, dropped(ranks), "the coordinator dropped requests");
        for (Kolo k : ranks) {
            assertTrue(k.cachedSpecs() <= CAPACITY, "rank " + k.rank() + " caches " + k.cachedSpecs() + " specs");
        }
    }

    /**
     * The case the cache must never get wrong: a rank waits in rounds for cached tensors while the others' new
     * tensors, run meanwhile, evict those very entries. The waiting rank sends them on to the coordinator at
     * once (where the late rank's requests meet them), instead of holding ids nobody knows any more.
     */
    @Test
    void anEvictionWhileARankWaitsSendsItsTensorsToTheCoordinator() throws Exception {
        String name = LocalJob.uniqueName("evict");
        try (LocalJob job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).set(Settings.CACHE_CAPACITY, 4).build())) {
            List<Kolo> byRank = job.byRank();
            List<Kolo> ranks = byRank;
            List<String> cached = List.of("a", "b", "c", "d");
            step(ranks, cached, 0, 2); // all four cached now
            double demotedBefore = byRank.get(0).meterRegistry().counter("kolo.negotiation.demoted").count();
            List<List<float[]>> results = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
                List<CompletableFuture<Tensor>> old = new ArrayList<>();
                List<CompletableFuture<Tensor>> fresh = new ArrayList<>();
                if (r == 0) {
                    cached.forEach(n -> old.add(k.allreduceAsync(n, Tensor.of(new float[] {1, r}, 2), ReduceOp.SUM)));
                }
                for (String n : List.of("e", "f")) { // new specs: their responses evict two of a..d
                    fresh.add(k.allreduceAsync(n, Tensor.of(new float[] {2, r}, 2), ReduceOp.SUM));
                }
                fresh.forEach(CompletableFuture::join);
                if (r == 1) {
                    cached.forEach(n -> old.add(k.allreduceAsync(n, Tensor.of(new float[] {1, r}, 2), ReduceOp.SUM)));
                }
                List<float[]> out = new ArrayList<>();
                old.forEach(f -> out.add(f.join().toFloatArray()));
                return out;
            });
            for (List<float[]> perRank : results) {
                assertEquals(cached.size(), perRank.size());
                for (float[] v : perRank) {
                    assertArrayEquals(new float[] {2, 1}, v);
                }
            }
            assertTrue(byRank.get(0).meterRegistry().counter("kolo.negotiation.demoted").count() > demotedBefore,
                    "rank 0's evicted waiting tensors went to the coordinator");
            // That the waiting rank sent them on at once (instead of waiting for the age limit) is what the demoted
            // count shows; how long the step takes is for a benchmark (worker.jar bench tensors), not a timed test.
            assertEquals(0.0, dropped(ranks), "the coordinator dropped requests");
        }
    }

    @Test
    void fiveThousandTensorsPerStepWithTheDefaultCache() throws Exception {
        String name = LocalJob.uniqueName("many-default");
        try (LocalJob job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).build())) {
            List<Kolo> byRank = job.byRank();
            List<Kolo> ranks = byRank;
            List<String> names = names("g", 5000, 0);
            double hitsBefore = byRank.get(0).meterRegistry().counter("kolo.cache.hits").count();
            for (int s = 0; s < 3; s++) {
                step(ranks, names, s, 64);
            }
            assertEquals(0.0, dropped(ranks), "the coordinator dropped requests");
            double hits = byRank.get(0).meterRegistry().counter("kolo.cache.hits").count() - hitsBefore;
            assertTrue(hits >= 2 * 5000 * 0.9, "steps 2 and 3 should be agreed by cache id: " + hits + " hits");
        }
    }
}
