package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a user's own integration test does: two workers of a job in one JVM built with nothing but a job name
 * and a size (default cluster port, default metrics port). Both start, each serving metrics on its own port;
 * a metrics port given explicitly that is taken is still an error.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DefaultPortsTest {

    @Test
    void twoWorkersWithDefaultPortsShareOneMachine() throws Exception {
        String job = LocalJob.uniqueName("defaults");
        try (LocalJob j = LocalJob.start(job, 2, i -> KoloConfig.builder().jobName(job).np(2).build())) {
            List<Integer> ports = j.workers.stream().map(Kolo::metricsPort).toList();
            assertNotEquals(ports.get(0), ports.get(1), "each worker has a metrics port of its own");
            HttpClient http = HttpClient.newHttpClient();
            for (int port : ports) {
                assertTrue(port >= Settings.METRICS_PORT.defaultValue()
                        && port < Settings.METRICS_PORT.defaultValue() + Settings.LOCAL_PORT_COUNT, "port " + port);
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/health/live")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode());
            }
            // A process set with nothing but the defaults: its ops run, and the default metrics port shows them.
            List<Kolo> ranks = j.byRank();
            List<Tensor> sums = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
                try (ProcessSet both = k.processSet(1, 0)) {
                    return both.allreduce("w", Tensor.of(new float[] {r + 1}, 1), ReduceOp.SUM);
                }
            });
            sums.forEach(t -> assertEquals(3f, t.toFloatArray()[0]));
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ranks.get(0)
                    .metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.lines().anyMatch(l -> l.startsWith("kolo_process_set_latency_seconds_count{")
                    && l.contains("process_set=\"1\"")), "the set's latency is served");
        }
    }

    @Test
    void anExplicitMetricsPortThatIsTakenIsAnError() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            String job = LocalJob.uniqueName("taken");
            KoloConfig c = LocalJob.config(job, 1).metricsPort(taken.getLocalPort()).build();
            KoloException e = assertThrows(KoloException.class, () -> Kolo.init(c));
            assertTrue(e.getMessage().startsWith("metrics port " + taken.getLocalPort() + " on 127.0.0.1 is not "
                    + "available"), e.getMessage());
        }
    }
}
