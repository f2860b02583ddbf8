package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two ranks write their timelines (KOLO_TIMELINE with {rank}); {@code timeline merge} makes one trace with both
 * ranks, on one clock: wall-clock time, so the same allreduce ends at the same moment on both ranks whenever
 * their traces began.
 */
class TimelineMergeTest {

    @Test
    @Timeout(120)
    void twoRanksMergeIntoOneTraceOnOneClock(@TempDir Path dir) throws Exception {
        String job = "merge-" + UUID.randomUUID().toString().substring(0, 8);
        String pattern = dir.resolve("trace-{rank}.json").toString();
        long beforeMicros = System.currentTimeMillis() * 1000;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?>[] ranks = new Future<?>[2];
            for (int i = 0; i < 2; i++) {
                ranks[i] = pool.submit(() -> {
                    KoloConfig c = KoloConfig.builder().jobName(job).np(2).metricsPort(0).set(Settings.TIMELINE, pattern).build();
                    try (Kolo kolo = Kolo.init(c)) {
                        kolo.allreduce("merged", Tensor.of(new float[] {1f}), ReduceOp.SUM);
                    }
                    return null;
                });
            }
            for (Future<?> f : ranks) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long afterMicros = System.currentTimeMillis() * 1000;
        Path out = dir.resolve("merged.json");
        assertEquals(0, WorkerCli.run("timeline", "merge", out.toString(), dir.resolve("trace-0.json").toString(),
                dir.resolve("trace-1.json").toString()));
        JsonNode events = new ObjectMapper().readTree(out.toFile());
        Map<Integer, Double> endOfAllreduce = new HashMap<>();
        Map<Integer, String> trackName = new HashMap<>();
        for (JsonNode e : events) {
            if (e.path("name").asText().equals("thread_name") && e.path("args").path("name").asText().equals("merged")) {
                trackName.put(e.path("pid").asInt(), e.path("tid").asText());
            }
        }
        for (JsonNode e : events) {
            int pid = e.path("pid").asInt();
            if (e.path("ph").asText().equals("X") && e.path("tid").asText().equals(trackName.get(pid))) {
                double end = e.path("ts").asDouble() + e.path("dur").asDouble();
                endOfAllreduce.merge(pid, end, Math::max);
            }
        }
        assertEquals(java.util.Set.of(0, 1), endOfAllreduce.keySet(), "both ranks' events are in the merged trace");
        for (double end : endOfAllreduce.values()) {
            // Wall-clock time: a rank's own clock (time since its trace began) would be far below this.
            assertTrue(end >= beforeMicros - 1000 && end <= afterMicros + 1000, "the allreduce ends at " + end
                    + " µs, not between " + beforeMicros + " and " + afterMicros + " µs since the epoch");
        }
        double apartMs = Math.abs(endOfAllreduce.get(0) - endOfAllreduce.get(1)) / 1000;
        assertTrue(apartMs < 500, "the allreduce ends " + apartMs + " ms apart on the two ranks: not one clock");
        assertTrue(Files.size(out) > 0);
    }
}
