package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The paths the manifests probe and scrape are served by a real worker's HTTP server. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class WorkerEndpointsTest {

    @Test
    void probeAndScrapePathsExistOnTheWorker() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        KoloConfig config = KoloConfig.builder().jobName("k8s-" + UUID.randomUUID().toString().substring(0, 8))
                .set(Settings.CLUSTER_PORT, 17000 + new java.util.Random().nextInt(100) * 20).metricsPort(port).build();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try (Kolo kolo = Kolo.init(config)) {
            for (String path : new String[] {ManifestsTest.LIVE, ManifestsTest.READY, ManifestsTest.METRICS}) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), path + ": " + r.body());
            }
            assertEquals(port, kolo.metricsPort());
            HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + ManifestsTest.METRICS)).build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(metrics.body().contains("kolo_ready"), "Kolo's own metrics are served");
        }
    }
}
