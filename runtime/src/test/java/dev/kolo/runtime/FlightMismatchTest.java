package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One rank submits a tensor of another shape under a name the ranks have used: the op fails on every rank, each rank
 * writes its flight recorder file on the failure, and the verdict names both sides of the mismatch.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlightMismatchTest {
    @Test
    void theVerdictNamesBothShapes(@TempDir Path dir) throws Exception {
        String job = LocalJob.uniqueName("flight-shape");
        try (LocalJob j = LocalJob.start(job, 3, i -> LocalJob.config(job, 3).set(Settings.FLIGHT_DIR, dir.toString())
                .build())) {
            j.onAll(k -> {
                for (int step = 0; step < 4; step++) {
                    int n = step == 3 && k.rank() == 2 ? 5 : 4;
                    try {
                        k.allreduce("w", Tensor.allocate(DType.FLOAT32, n), ReduceOp.SUM);
                    } catch (KoloException expected) {
                        return expected; // the mismatch, on every rank
                    }
                }
                throw new AssertionError("rank " + k.rank() + ": the mismatched allreduce did not fail");
            });
            FlightFiles.await(dir, List.of(0, 1, 2), "failure", 30);
            List<String> report = FlightFiles.analyse(dir);
            String verdict = report.get(0);
            assertTrue(verdict.startsWith("verdict: mismatch on op 'w' #4: "), String.join("\n", report));
            assertTrue(verdict.contains("ranks 0,1 submitted allreduce float32 [4]"), String.join("\n", report));
            assertTrue(verdict.contains("rank 2 submitted allreduce float32 [5]"), String.join("\n", report));
        }
    }
}
