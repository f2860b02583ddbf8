package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Each rank's mirror of the response cache stays as small as the coordinator's, also when one fused response
 * brings more new specs than the cache holds (it then evicts some of its own): found leaking by bench soak.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ResponseCacheMirrorTest {
    private static final int CAPACITY = 4;

    @Test
    void mirrorStaysBoundedWhenAResponseEvictsItsOwnEntries() throws Exception {
        String job = LocalJob.uniqueName("cache-mirror");
        try (LocalJob j = LocalJob.start(job, 2, i -> LocalJob.config(job, 2).set(Settings.CACHE_CAPACITY, CAPACITY).build())) {
            List<Integer> sizes = j.onAll(k -> {
                for (int step = 0; step < 20; step++) {
                    List<CompletableFuture<Tensor>> pending = new ArrayList<>();
                    for (int t = 0; t < 12; t++) { // 12 new specs per fused response, 3x the cache
                        pending.add(k.allreduceAsync("g" + t, Tensor.of(new float[] {t, step}, 2), ReduceOp.SUM));
                    }
                    for (int t = 0; t < 12; t++) {
                        assertArrayEquals(new float[] {2 * t, 2 * step}, pending.get(t).join().toFloatArray());
                    }
                }
                int bounded = k.cachedSpecs();
                // Then a step set the cache can hold: from its second step on, every tensor is a hit.
                double hitsBefore = hits(k);
                for (int step = 0; step < 5; step++) {
                    List<CompletableFuture<Tensor>> pending = new ArrayList<>();
                    for (int t = 0; t < CAPACITY - 1; t++) {
                        pending.add(k.allreduceAsync("h" + t, Tensor.of(new float[] {t}, 1), ReduceOp.SUM));
                    }
                    for (int t = 0; t < CAPACITY - 1; t++) {
                        assertArrayEquals(new float[] {2 * t}, pending.get(t).join().toFloatArray());
                    }
                }
                assertTrue(hits(k) - hitsBefore >= 4 * (CAPACITY - 1), "cache hits on a repeated step set: "
                        + (hits(k) - hitsBefore));
                return bounded;
            });
            for (int size : sizes) {
                assertTrue(size <= CAPACITY, "a rank mirrors " + size + " cached specs; the cache holds " + CAPACITY);
            }
        }
    }

    private static double hits(Kolo k) {
        return k.meterRegistry().find("kolo.cache.hits").counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
