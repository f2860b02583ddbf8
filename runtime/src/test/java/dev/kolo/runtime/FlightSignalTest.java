package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.flight.FlightDumpFile;
import dev.kolo.testing.ChildJvms;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker process stopped by SIGTERM writes its flight recorder file from its shutdown hook, showing the op it was
 * in; the rank it leaves behind fails and writes its own on that failure.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlightSignalTest {
    @Test
    void aSignalledWorkerWritesItsFileAndItsPeerWritesOnTheFailure(@TempDir Path dir) throws Exception {
        try (ChildJvms workers = FlightJobs.start(dir, 2, Map.of())) {
            workers.awaitEach(0, 2, 60, "both ranks running", l -> l.contains("flight loop running"));
            workers.signal(1, "TERM");
            FlightDumpFile signalled = FlightFiles.await(dir, List.of(1), "signal", 30).get(0);
            assertTrue(signalled.ops().stream().anyMatch(r -> r.name().equals("grad") && r.occurrence() > 100),
                    "the signalled rank's file holds its loop's ops: " + signalled.ops().size());
            FlightDumpFile survivor = FlightFiles.await(dir, List.of(0), "failure", 60).get(0);
            assertTrue(survivor.ops().stream().anyMatch(r -> r.error() != null), "the survivor's failed op");
        }
    }
}
