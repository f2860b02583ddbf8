package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code KOLO_METRICS_HOST}: the metrics port (and its status page) binds the address given, every interface for
 * {@code 0.0.0.0} with the page's address on the worker's own host, and an address not of this machine is refused
 * naming the setting.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MetricsHostTest {
    @Test
    void theMetricsPortBindsTheAddressGiven() throws Exception {
        String job = LocalJob.uniqueName("mhost");
        try (Kolo kolo = Kolo.init(LocalJob.config(job, 1).metricsPort(0).build())) {
            assertEquals(null, kolo.statusUrl(), "no page with the metrics port off");
        }
        job = LocalJob.uniqueName("mhost");
        try (Kolo kolo = Kolo.init(LocalJob.config(job, 1).metricsPort(freePort()).set(Settings.METRICS_HOST, "0.0.0.0").build())) {
            String page = kolo.statusUrl();
            assertEquals("http://127.0.0.1:" + kolo.metricsPort() + "/", page, "a wildcard bind names the host");
            assertEquals(page, kolo.jobStatusUrl(), "a job of one is its own coordinator");
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(page + "status"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("\"job\":\"" + job + "\""), r.body());
        }
    }

    @Test
    void anAddressNotOfThisMachineIsRefusedNamingTheSetting() {
        // TEST-NET-1 (RFC 5737): never assigned to a host, so binding it fails.
        KoloException e = assertThrows(KoloException.class, () -> Kolo.init(LocalJob.config(
                LocalJob.uniqueName("mhost"), 1).metricsPort(freePort()).set(Settings.METRICS_HOST, "192.0.2.1").build()).close());
        assertTrue(e.getMessage().contains("KOLO_METRICS_HOST") && e.getMessage().contains("192.0.2.1"),
                e.getMessage());
    }

    private static int freePort() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
