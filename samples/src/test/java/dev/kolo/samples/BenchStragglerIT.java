package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code worker.jar bench straggler} as a user runs it: three worker processes, the last twice as slow per sample,
 * under {@code --policy rebalance} (which the bench hands its workers as {@code KOLO_STRAGGLER}): the slow rank
 * ends with the smallest share of the same global batch, and the line reports the throughput against the ideal.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BenchStragglerIT {
    @Test
    void rebalanceGivesTheSlowRankTheSmallestShare() throws Exception {
        try (WorkerProcess bench = WorkerProcess.start("bench", "straggler", "-np", "3", "--slowdown", "2",
                "--policy", "rebalance", "--sample-us", "300", "--steps", "100", "--settle", "60", "--window", "10",
                "--json")) {
            assertEquals(0, bench.exitCode(150), bench.transcript());
            List<String> lines = bench.lines(l -> l.startsWith("{\"bench\":\"straggler\""));
            assertEquals(1, lines.size(), bench.transcript());
            JsonObject result = new JsonObject(lines.get(0));
            int[] shares = Arrays.stream(result.getString("final_shares").replaceAll("[\\[\\] ]", "").split(","))
                    .mapToInt(Integer::parseInt).toArray();
            assertEquals(96, Arrays.stream(shares).sum(), result.encode());
            // Speeds 1 : 1 : 1/2 give 38.4 : 38.4 : 19.2 of 96.
            assertTrue(shares[2] < shares[0] && shares[2] < shares[1] && shares[2] <= 24, result.encode());
            assertEquals("rebalance", result.getString("policy"));
            assertTrue(result.getDouble("throughput_vs_ideal") > 0, result.encode());
            assertEquals(2e6 / 300 + 1e6 / 600, result.getDouble("ideal_samples_per_s"), 0.1, "2 x 1/300us + 1/600us");
        }
    }
}
