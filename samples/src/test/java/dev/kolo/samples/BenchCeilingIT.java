package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code worker.jar bench ceiling} as a user runs it, on the sample's default model: a job at -np 2, then two
 * single-rank jobs at once, each a real launch of worker processes; the round's line gives both rates and their
 * ratio, and the last line the median ratio.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class BenchCeilingIT {
    @Test
    void aRoundComparesTheJobWithTwoLoneJobsAtOnce() throws Exception {
        try (WorkerProcess bench = WorkerProcess.start("bench", "ceiling", "-np", "2", "--rounds", "1", "--json", "--",
                "--max-steps", "30", "--log-every", "10")) {
            assertEquals(0, bench.exitCode(200), bench.transcript());
            List<String> lines = bench.lines(l -> l.startsWith("{\"bench\":\"ceiling\""));
            assertEquals(2, lines.size(), bench.transcript());
            JsonObject round = new JsonObject(lines.get(0));
            double job = round.getDouble("job_samples_per_s");
            double ceiling = round.getDouble("ceiling_samples_per_s");
            assertTrue(job > 0 && ceiling > 0, round.encode());
            assertEquals(job / ceiling, round.getDouble("job_vs_ceiling"), 1e-3, round.encode());
            assertTrue(job / ceiling < 2, "two processes that never wait cannot be outrun by half: " + round.encode());
            assertEquals(round.getDouble("job_vs_ceiling"), new JsonObject(lines.get(1)).getDouble(
                    "median_job_vs_ceiling"), 1e-4, "one round: its ratio is the median");
        }
    }
}
