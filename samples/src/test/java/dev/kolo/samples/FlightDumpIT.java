package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flight recorder as a user reaches it from the command line: {@code worker.jar flight dump --url} fetches
 * every rank's file from a running job started with {@code launch --log-dir}, {@code flight analyse} reads them,
 * and a SIGTERM to the launcher leaves each rank's file, written on the signal, in the log directory: the
 * directory reached the workers as their {@code KOLO_FLIGHT_DIR}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightDumpIT {
    @TempDir
    Path dir;

    @Test
    void dumpFetchesEveryRanksFileAndTheLogDirGetsThemOnASignal() throws Exception {
        Path logs = dir.resolve("logs");
        Path fetched = dir.resolve("fetched");
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "2", "--log-dir", logs.toString(), "--",
                "--epochs", "10000", "--train-limit", "1280", "--log-every", "10")) {
            String live = launch.awaitLine(l -> l.contains("watch it live at "), 90);
            String page = live.substring(live.indexOf("watch it live at ") + "watch it live at ".length()).trim();
            launch.awaitLine(l -> l.contains("kolo: step="), 90); // the ranks are training: ops to record

            try (WorkerProcess dump = WorkerProcess.start("flight", "dump", "--url", page, "--out",
                    fetched.toString())) {
                assertEquals(0, dump.exitCode(60), dump.transcript());
                assertTrue(dump.out.stream().anyMatch(l -> l.startsWith("saved 2 of 2 ranks' files in ")),
                        dump.transcript());
            }
            for (int rank = 0; rank < 2; rank++) {
                JsonObject file = new JsonObject(Files.readString(fetched.resolve("flight-rank-" + rank + ".json")));
                assertEquals("request", file.getString("trigger"), file.getString("reason"));
                assertEquals(rank, file.getInteger("rank"));
                assertFalse(file.getJsonArray("ops").isEmpty(), "rank " + rank + " recorded its ops");
            }
            try (WorkerProcess analyse = WorkerProcess.start("flight", "analyse", fetched.toString())) {
                assertEquals(0, analyse.exitCode(60), analyse.transcript());
                assertFalse(analyse.out.isEmpty(), analyse.transcript());
            }

            new ProcessBuilder("kill", "-TERM", Long.toString(launch.process.pid())).start().waitFor();
            assertEquals(143, launch.exitCode(60), launch.transcript());
        }
        for (int rank = 0; rank < 2; rank++) {
            Path file = logs.resolve("flight-rank-" + rank + ".json");
            assertTrue(Files.exists(file), "rank " + rank + " wrote its file into --log-dir on the signal: "
                    + List.of(logs.toFile().list()));
            assertEquals("signal", new JsonObject(Files.readString(file)).getString("trigger"));
        }
    }
}
