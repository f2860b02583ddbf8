package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With the meters on and the timeline off, as a job runs by default, small allreduces completed by their agreement
 * round alone are timed from their submit to the round's end: each one lands in the latency histograms, with a
 * positive duration.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EagerOpMetricsTest {
    private static final int OPS = 50;

    private static Map<String, Double> scrape(int port) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return PrometheusText.parse(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/metrics")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    @Test
    void eagerOpsAreTimedFromSubmitToTheRoundsEnd() throws Exception {
        String job = LocalJob.uniqueName("eager-metrics");
        int portA = ObservabilityTest.freePort();
        int portB = ObservabilityTest.freePort();
        CompletableFuture<Kolo> a = CompletableFuture.supplyAsync(() -> Kolo.init(LocalJob.config(job, 2)
                .metricsPort(portA).build()));
        Kolo b = Kolo.init(LocalJob.config(job, 2).metricsPort(portB).build());
        Kolo ka = a.get(60, TimeUnit.SECONDS);
        try {
            List<Kolo> both = ka.rank() == 0 ? List.of(ka, b) : List.of(b, ka);
            // The first goes to the coordinator; from then on the tensor is cached and agreed in the round alone.
            CollectiveMatrixTest.onAll(both, (r, k) -> k.allreduce("step.loss", Tensor.of(new float[] {r}, 1),
                    ReduceOp.SUM));
            Map<String, Double> before = scrape(portA);
            for (int i = 0; i < OPS; i++) {
                CollectiveMatrixTest.onAll(both, (r, k) -> k.allreduce("step.loss", Tensor.of(new float[] {r}, 1),
                        ReduceOp.SUM));
            }
            Map<String, Double> after = scrape(portA);
            String op = "op=\"allreduce\"";
            assertEquals(OPS, PrometheusText.sum(after, "kolo_negotiation_eager_total")
                    - PrometheusText.sum(before, "kolo_negotiation_eager_total"), 0.0, "completed by the round alone");
            assertEquals(OPS, PrometheusText.sum(after, "kolo_collective_latency_seconds_count", op)
                    - PrometheusText.sum(before, "kolo_collective_latency_seconds_count", op), 0.0);
            assertEquals(OPS, PrometheusText.sum(after, "kolo_negotiation_latency_seconds_count")
                    - PrometheusText.sum(before, "kolo_negotiation_latency_seconds_count"), 0.0);
            assertTrue(PrometheusText.sum(after, "kolo_collective_latency_seconds_sum", op)
                    > PrometheusText.sum(before, "kolo_collective_latency_seconds_sum", op), "a positive time");
            assertTrue(PrometheusText.sum(after, "kolo_collective_latency_seconds_max", op) > 0, "its maximum");
        } finally {
            b.close();
            ka.close();
        }
    }
}
