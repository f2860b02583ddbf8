package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four workers with KOLO_MIN_NP=3; two are SIGKILLed. The two survivors wait for KOLO_ELASTIC_TIMEOUT,
 * then stop with a non-zero exit and a message saying no generation formed and what it needs; they write
 * no checkpoint while they wait.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MinNpNotReachedTest {
    @Test
    void survivorsWaitThenFailClearly() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("ew-minnp");
        try (WorkerProcesses job = new WorkerProcesses(4, 3, 4)) {
            job.training(1 << 16, 100000, 50).prop("ew.checkpointEvery", 1)
                    .env("KOLO_ELASTIC_TIMEOUT", "6").env("KOLO_CHECKPOINT_DIR", dir.toString());
            job.startAll(4);
            job.awaitEach(0, 4, 60, "step 4", l -> l.contains("ew step=4 "));
            int mark = job.lines.size();
            long killedAt = System.nanoTime();
            job.kill(1);
            job.kill(3);
            List<String> errors = job.awaitEach(mark, 2, 40, "the survivors giving up",
                    l -> l.contains("kolo: the elastic job cannot go on"));
            double waited = (System.nanoTime() - killedAt) / 1e9;
            for (String e : errors) {
                assertTrue(e.contains("no new generation formed within 6 s") && e.contains("KOLO_MIN_NP=3"), e);
            }
            assertEquals(3, job.waitExit(0, 20));
            assertEquals(3, job.waitExit(2, 20));
            assertTrue(waited >= 5.5, "gave up after " + waited + " s, before KOLO_ELASTIC_TIMEOUT");
            // No step was taken after the loss, so nothing newer than what was committed before it was written.
            long stepsAfter = job.lines.subList(mark, job.lines.size()).stream()
                    .filter(l -> l.contains("ew step=") && !l.contains(" gen=1 ")).count();
            assertEquals(0, stepsAfter, "a minority trained on");
            System.out.println("survivors gave up " + waited + " s after the loss: " + errors.get(0));
        }
    }
}
