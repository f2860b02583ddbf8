package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.flight.FlightDumpFile;
import dev.kolo.runtime.internal.flight.FlightRecord;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One job of three whose rank 2 computes three times as long as the others each step: asked for at {@code /status/flight}, every rank writes
 * its file and answers with it, and the verdict names rank 2 as the straggler; the ring keeps its size however many
 * ops run.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FlightStragglerTest {
    static final int KEPT = 64;
    @TempDir
    static Path dir;
    static LocalJob job;

    @BeforeAll
    static void start() throws Exception {
        String name = LocalJob.uniqueName("flight-slow");
        int[] ports = {freePort(), freePort(), freePort()};
        job = LocalJob.start(name, 3, i -> LocalJob.config(name, 3).set(Settings.FLIGHT_DIR, dir.toString())
                .set(Settings.FLIGHT_RECORDER, KEPT).metricsPort(ports[i]).build());
    }

    @AfterAll
    static void stop() {
        if (job != null) {
            job.close();
        }
    }

    @Test
    void theVerdictNamesTheSlowRank() throws Exception {
        job.onAll(k -> {
            Tensor t = Tensor.allocate(DType.FLOAT32, 256);
            for (int step = 0; step < 40; step++) {
                // The scripted fault: every rank computes each step, rank 2 three times as long.
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(k.rank() == 2 ? 30 : 10));
                k.allreduce("a", t, ReduceOp.SUM);
                k.allreduce("b", t, ReduceOp.SUM);
            }
            return null;
        });
        askEveryRank();
        List<String> report = FlightFiles.analyse(dir);
        assertTrue(report.get(0).startsWith("verdict: rank 2 is the straggler"), String.join("\n", report));
    }

    @Test
    void theRingKeepsItsSizeOverALongRun() throws Exception {
        job.onAll(k -> {
            Tensor t = Tensor.allocate(DType.FLOAT32, 4);
            for (int i = 0; i < 50 * KEPT; i++) {
                k.allreduce("ring/" + (i % 7), t, ReduceOp.SUM);
            }
            return null;
        });
        askEveryRank();
        for (FlightDumpFile d : FlightFiles.await(dir, List.of(0, 1, 2), "request", 10)) {
            List<FlightRecord> ops = d.ops();
            assertEquals(KEPT, ops.size(), "rank " + d.rank() + " kept " + ops.size() + " of " + d.recorded());
            assertTrue(d.recorded() >= 50 * KEPT, "recorded " + d.recorded());
            for (int i = 0; i < ops.size(); i++) {
                assertEquals(d.recorded() - KEPT + i, ops.get(i).seq(), "the newest ops, in order");
            }
        }
    }

    /** Asks each rank's metrics port for its flight recorder, as 'worker.jar flight dump' does. */
    private static void askEveryRank() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        for (Kolo k : job.workers) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(k.statusUrl() + "status/flight"))
                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"rank\":" + k.rank()), r.body());
        }
        FlightFiles.await(dir, List.of(0, 1, 2), "request", 10);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
