package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fixed job of three whose rank 2 is frozen by SIGSTOP: after the heartbeat timeout ranks 0 and 1 lose it, their
 * op fails, and each writes its file; the frozen rank writes none, and the verdict names it and the op the others were
 * waiting on.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class FlightStoppedRankTest {
    @Test
    void theVerdictNamesTheFrozenRank(@TempDir Path dir) throws Exception {
        try (ChildJvms workers = FlightJobs.start(dir, 3, Map.of("KOLO_HEARTBEAT_TIMEOUT", "3"))) {
            workers.awaitEach(0, 3, 90, "every rank running", l -> l.contains("flight loop running"));
            workers.signal(2, "STOP");
            try {
                FlightFiles.await(dir, List.of(0, 1), "failure", 90);
                assertTrue(!Files.exists(dir.resolve("flight-rank-2.json")), "a stopped process writes nothing");
                List<String> report = FlightFiles.analyse(dir);
                String verdict = report.get(0);
                assertTrue(verdict.startsWith("verdict: rank 2 left no flight recorder file"), String.join("\n", report));
                assertTrue(verdict.contains("ranks 0,1 were waiting on op 'grad' #"), String.join("\n", report));
            } finally {
                workers.signal(2, "KILL");
            }
        }
    }
}
