package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A fixed job (KOLO_MIN_NP unset) of three workers writing checkpoints to KOLO_CHECKPOINT_DIR. One is
 * SIGKILLed: the other two stop with a non-zero exit and a message naming the lost rank. Started again,
 * all three resume from the newest valid checkpoint and finish with an uninterrupted run's result.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FixedJobResumeTest {
    static final int DIM = 1 << 16;
    static final int STEPS = 60;

    @Test
    void lostWorkerStopsTheJobAndARestartResumesFromTheCheckpoint() throws Exception {
        Path dir = Files.createTempDirectory("ew-fixed");
        try (WorkerProcesses job = new WorkerProcesses(3, 0, 0)) {
            job.training(DIM, STEPS, 60).prop("ew.checkpointEvery", 2)
                    .env("KOLO_CHECKPOINT_DIR", dir.toString());
            job.startAll(3);
            List<String> ready = job.awaitEach(0, 3, 60, "ready", l -> l.contains("ew ready"));
            job.awaitEach(0, 3, 60, "step 14", l -> l.contains("ew step=14 "));
            int victim = 1;
            String victimRank = WorkerProcesses.field(ready.stream().filter(l -> WorkerProcesses.index(l) == victim)
                    .findFirst().orElseThrow(), "rank");
            int mark = job.lines.size();
            job.kill(victim);
            List<String> stops = job.awaitEach(mark, 2, 30, "the others stopping", l -> l.contains("kolo: rank "));
            for (String s : stops) {
                assertTrue(s.contains("kolo: rank " + victimRank + " ") && s.contains("was lost")
                        && s.contains("not elastic") && s.contains("resume from the newest valid checkpoint (ckpt-s"),
                        "message must name the lost rank and how to resume: " + s);
                // Named from the cluster's membership, not from whichever connection broke first: a survivor's
                // ring neighbour aborting may close its connections before the dead worker's are noticed.
                assertFalse(s.contains("cluster still lists every worker"), "lost rank not confirmed: " + s);
            }
            for (int i = 0; i < 3; i++) {
                if (i != victim) {
                    assertEquals(3, job.waitExit(i, 20), "exit status of worker " + i);
                }
            }
            try (var list = Files.list(dir)) {
                assertTrue(list.anyMatch(p -> p.getFileName().toString().startsWith("ckpt-s")), "no checkpoint written");
            }

            mark = job.lines.size();
            job.startAll(3);
            List<String> starts = job.awaitEach(mark, 3, 60, "the restarted job starting", l -> l.contains("ew start"));
            long resumedAt = Long.parseLong(WorkerProcesses.field(starts.get(0), "step"));
            assertTrue(resumedAt >= 4, "did not resume from a checkpoint: " + starts.get(0));
            Checks.same(starts, "step", "resumed step");
            Checks.same(starts, "checksum", "resumed state");
            List<String> done = job.awaitEach(mark, 3, 90, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            System.out.println("resumed at step " + resumedAt + "; stop message: " + stops.get(0));
        }
    }
}
