package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Metrics and health over real HTTP from a 2-worker job, and the Chrome-trace timeline. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ObservabilityTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Whether some allreduce so far reduced more than one tensor in one fused buffer. */
    private boolean fusedSome(int port) throws Exception {
        Map<String, Double> m = PrometheusText.parse(get(port, "/metrics").body());
        return PrometheusText.sum(m, "kolo_fusion_tensors_sum") > PrometheusText.sum(m, "kolo_fusion_tensors_count");
    }

    @Test
    void metricsHealthAndTimelineOfATwoWorkerJob(@TempDir Path dir) throws Exception {
        String job = LocalJob.uniqueName("obs");
        int portA = freePort();
        int portB = freePort();
        String timeline = dir.resolve("trace-{rank}.json").toString();
        CompletableFuture<Kolo> a = CompletableFuture.supplyAsync(() -> Kolo.init(LocalJob.config(job, 2)
                .metricsPort(portA).set(Settings.TIMELINE, timeline).build()));
        // Before the second worker arrives: live, but not ready.
        HttpResponse<String> notReady = null;
        for (int i = 0; i < 200 && notReady == null; i++) {
            try {
                notReady = get(portA, "/health/ready");
            } catch (java.io.IOException starting) {
                Thread.sleep(100);
            }
        }
        assertEquals(503, notReady.statusCode(), notReady.body());
        assertTrue(notReady.body().contains("waiting for rendezvous"));
        assertEquals(200, get(portA, "/health/live").statusCode());

        Kolo b = Kolo.init(LocalJob.config(job, 2).metricsPort(portB).set(Settings.TIMELINE, timeline).build());
        Kolo ka = a.get(60, TimeUnit.SECONDS);
        try {
            HttpResponse<String> ready = get(portA, "/health/ready");
            assertEquals(200, ready.statusCode());
            assertTrue(ready.body().contains("ready: rank"));
            assertEquals(404, get(portA, "/nope").statusCode());

            Map<String, Double> before = PrometheusText.parse(get(portA, "/metrics").body());
            List<Kolo> both = ka.rank() == 0 ? List.of(ka, b) : List.of(b, ka);
            for (int i = 0; i < 5; i++) {
                int step = i;
                CollectiveMatrixTest.onAll(both, (r, k) -> k.allreduce("weights", Tensor.of(new float[] {step, r}, 2),
                        ReduceOp.SUM));
            }
            HttpResponse<String> scrape = get(portA, "/metrics");
            assertTrue(scrape.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
            Map<String, Double> after = PrometheusText.parse(scrape.body());
            String op = "op=\"allreduce\"";
            assertEquals(5, PrometheusText.sum(after, "kolo_collective_latency_seconds_count", op)
                    - PrometheusText.sum(before, "kolo_collective_latency_seconds_count", op), 0.0);
            // p50 and p99 come from the buckets (histogram_quantile, as the bundled dashboard): every op is in +Inf.
            assertEquals(5, PrometheusText.sum(after, "kolo_collective_latency_seconds_bucket", op, "le=\"+Inf\"")
                    - PrometheusText.sum(before, "kolo_collective_latency_seconds_bucket", op, "le=\"+Inf\""), 0.0);
            assertTrue(PrometheusText.sum(after, "kolo_negotiation_latency_seconds_bucket", "le=\"+Inf\"") >= 5);
            assertEquals(5 * 8, PrometheusText.sum(after, "kolo_collective_bytes_total", op)
                    - PrometheusText.sum(before, "kolo_collective_bytes_total", op), 0.0);
            assertTrue(PrometheusText.sum(after, "kolo_dataplane_sent_bytes_total") > 0);
            assertTrue(PrometheusText.sum(after, "kolo_negotiation_latency_seconds_count") >= 5);
            assertTrue(PrometheusText.sum(after, "kolo_cache_hits_total") >= 4, "repeated tensor: cache hits");
            assertEquals(2, PrometheusText.sum(after, "kolo_ring_size"), 0.0);
            assertEquals(1, PrometheusText.sum(after, "kolo_ready"), 0.0);
            assertEquals(1, PrometheusText.sum(after, "kolo_kernels", "impl=\"" + ka.kernels() + "\""), 0.0);
            assertTrue(PrometheusText.sum(after, "jvm_memory_used_bytes") > 0, "JVM binders");
            // Per-rank dashboards group JVM series by rank: they must carry it.
            assertTrue(PrometheusText.sum(after, "jvm_memory_used_bytes", "rank=\"" + ka.rank() + "\"") > 0,
                    "JVM meters tagged with the rank");
            assertEquals(PrometheusText.sum(after, "jvm_memory_used_bytes"),
                    PrometheusText.sum(after, "jvm_memory_used_bytes", "rank=\"" + ka.rank() + "\""), 0.0,
                    "no JVM memory series without the rank");
            assertTrue(after.keySet().stream().anyMatch(k -> k.startsWith("vertx_")), "Vert.x's own metrics");
            assertFalse(after.keySet().stream().anyMatch(k -> k.startsWith("vertx_eventbus_")),
                    "per-message event-bus meters stay off: they cost more than a small collective");
            assertTrue(after.keySet().stream().anyMatch(k -> k.contains("kolo_job=\"" + job + "\"")), "job tag");

            // Large enough for the ring path (its reduce-scatter and allgather phases), and a fused group.
            float[] big = new float[1 << 16];
            CollectiveMatrixTest.onAll(both, (r, k) -> k.allreduce("big", Tensor.of(big, big.length), ReduceOp.SUM));
            // A group runs as one once every member is ready everywhere: one fused buffer.
            CollectiveMatrixTest.onAll(both, (r, k) -> k.groupedAllreduce("pair",
                    List.of(Tensor.of(big, big.length), Tensor.of(new float[] {r}, 1)), ReduceOp.SUM));
            assertTrue(fusedSome(portA), "the grouped allreduce fused");
            // The two workers share an address: their bytes went through shared memory, and the metrics say so.
            Map<String, Double> moved = PrometheusText.parse(get(portA, "/metrics").body());
            assertTrue(PrometheusText.sum(moved, "kolo_dataplane_sent_bytes_total", "transport=\"shm\"") > 0,
                    "bytes sent through shared memory");
            assertEquals(PrometheusText.sum(moved, "kolo_dataplane_sent_bytes_total"),
                    PrometheusText.sum(moved, "kolo_dataplane_sent_bytes_total", "transport=\"shm\""), 0.0,
                    "every byte through shared memory");
            // A process set's op, its result right on both ranks: its track on the timeline names the set.
            List<Tensor> setResults = CollectiveMatrixTest.onAll(both, (r, k) -> {
                try (ProcessSet set = k.processSet(0, 1)) {
                    return set.allreduce("weights", Tensor.of(new float[] {r + 1, 10 * r}, 2), ReduceOp.SUM);
                }
            });
            for (Tensor t : setResults) {
                assertArrayEquals(new float[] {3, 10}, t.toFloatArray(), 0f, "the process set's allreduce");
            }

            // The ring is aborted when the other worker dies: ready flips back, live stays.
            Kolo other = ka.rank() == 0 ? b : ka;
            Kolo watched = ka.rank() == 0 ? ka : b;
            int watchedPort = watched == ka ? portA : portB;
            other.clusterNode().hazelcast().getLifecycleService().terminate();
            HttpResponse<String> flipped = null;
            for (int i = 0; i < 100; i++) {
                flipped = get(watchedPort, "/health/ready");
                if (flipped.statusCode() == 503) {
                    break;
                }
                Thread.sleep(100);
            }
            assertEquals(503, flipped.statusCode());
            assertTrue(flipped.body().contains("aborted"), flipped.body());
            assertEquals(200, get(watchedPort, "/health/live").statusCode());
            assertEquals(0, PrometheusText.sum(PrometheusText.parse(get(watchedPort, "/metrics").body()), "kolo_ready"));
        } finally {
            b.close();
            ka.close();
        }
        int marked = 0;
        for (int rank = 0; rank < 2; rank++) {
            JsonArray events = new JsonArray(Files.readString(Path.of(timeline.replace("{rank}", "" + rank))));
            Set<String> phases = new HashSet<>();
            boolean track = false;
            boolean setTrack = false;
            Set<String> transports = new HashSet<>();
            for (int i = 0; i < events.size(); i++) {
                JsonObject e = events.getJsonObject(i);
                phases.add(e.getString("name"));
                if (List.of("REDUCE_SCATTER", "ALLGATHER", "DIRECT_ALLREDUCE").contains(e.getString("name"))) {
                    transports.add(e.getJsonObject("args", new JsonObject()).getString("transport"));
                }
                track |= "thread_name".equals(e.getString("name"))
                        && "weights".equals(e.getJsonObject("args").getString("name"));
                setTrack |= "thread_name".equals(e.getString("name"))
                        && "set 1/weights".equals(e.getJsonObject("args").getString("name"));
            }
            assertEquals(Set.of("shm"), transports, "the transport of every data-plane phase");
            assertTrue(track, "a track named after the tensor");
            assertTrue(setTrack, "a track named after the process set and the tensor");
            assertTrue(phases.containsAll(List.of("NEGOTIATE_ALLREDUCE", "QUEUE", "DIRECT_ALLREDUCE", "REDUCE_SCATTER",
                    "ALLGATHER", "MEMCPY_IN_FUSION_BUFFER", "MEMCPY_OUT_FUSION_BUFFER")), "phases: " + phases + " in " + events);
            if (phases.containsAll(List.of("RANK_READY 0", "RANK_READY 1"))) {
                marked++;
            }
        }
        assertEquals(1, marked, "the coordinator's trace marks each rank becoming ready");
    }
}
