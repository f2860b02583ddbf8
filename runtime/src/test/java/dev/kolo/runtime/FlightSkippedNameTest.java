package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One rank skips a tensor name (ranks 0 and 1 block on 'a' at step 6, rank 2 goes on to 'b'): every rank writes its
 * flight recorder file when its op has waited past the stall warning, and the analyser's verdict names rank 2, the op
 * it never submitted, and what it was waiting on instead.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlightSkippedNameTest {
    static final int SKIP_AT = 5;

    @Test
    void theVerdictNamesTheRankThatSkippedTheNameAndWhatItDidInstead(@TempDir Path dir) throws Exception {
        String job = LocalJob.uniqueName("flight-skip");
        ExecutorService loops = Executors.newFixedThreadPool(3);
        try (LocalJob j = LocalJob.start(job, 3, i -> LocalJob.config(job, 3).set(Settings.FLIGHT_DIR, dir.toString())
                .set(Settings.STALL_WARNING, Duration.ofSeconds(2)).build())) {
            for (Kolo k : j.workers) {
                loops.submit(() -> steps(k));
            }
            FlightFiles.await(dir, List.of(0, 1, 2), "stall", 60);
            List<String> report = FlightFiles.analyse(dir);
            String verdict = report.get(0);
            assertTrue(verdict.startsWith("verdict: rank 2 never submitted op 'a' #" + (SKIP_AT + 1)), String.join("\n", report));
            assertTrue(verdict.contains("which ranks 0,1 submitted and waited on"), String.join("\n", report));
            assertTrue(verdict.contains("rank 2 was waiting on 'b' #" + (SKIP_AT + 1)), String.join("\n", report));
        } finally {
            loops.shutdownNow();
        }
    }

    /** Every rank allreduces 'a' then 'b' each step; at step SKIP_AT rank 2 skips 'a'. Ends when the job closes. */
    private static Void steps(Kolo kolo) {
        Tensor t = Tensor.allocate(DType.FLOAT32, 16);
        List<Tensor> keep = new ArrayList<>();
        for (int step = 0; step <= SKIP_AT; step++) {
            if (!(step == SKIP_AT && kolo.rank() == 2)) {
                keep.add(kolo.allreduce("a", t, ReduceOp.SUM));
            }
            keep.add(kolo.allreduce("b", t, ReduceOp.SUM));
        }
        return null;
    }
}
