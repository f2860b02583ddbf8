package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An elastic job running at KOLO_MAX_NP and one worker more with the same settings (a replacement that came up
 * too early, a replica too many): the extra worker waits outside the job, saying so, while the job runs on in
 * its generation without a single regroup; it takes the first place that frees; and when the job ends while it
 * waits, it stops with a message instead of waiting out its timeout.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class MaxNpWaitTest {
    static final int DIM = 1 << 16;

    @Test
    void anExtraWorkerWaitsWithoutRegroupingAndTakesTheFirstFreedPlace() throws Exception {
        Path stop = Files.createTempDirectory("ew-stop").resolve("stop");
        try (WorkerProcesses job = new WorkerProcesses(3, 2, 3)) {
            job.training(DIM, 100000, 40).prop("ew.stopFile", stop);
            job.startAll(3);
            List<String> ready = job.awaitEach(0, 3, 60, "ready", l -> l.contains("ew ready"));
            String gen = WorkerProcesses.field(ready.get(0), "gen");
            job.awaitEach(0, 3, 60, "step 4", l -> l.contains("ew step=4 "));
            int mark = job.lines.size();
            int extra = job.start();
            String waiting = job.await(mark, 60, "the extra worker saying it waits", l -> l.startsWith("[" + extra
                    + "] ") && l.contains("waiting for a place") && l.contains("KOLO_MAX_NP=3"));
            // The job runs on: 20 more steps on every rank, all in the generation it had, no regroup.
            int from = job.lines.size();
            long last = lastStep(job, from);
            job.awaitEach(from, 3, 60, "20 more steps", l -> l.contains("ew step=" + (last + 20) + " "));
            List<String> meanwhile = job.lines.subList(mark, job.lines.size());
            assertTrue(meanwhile.stream().noneMatch(l -> l.contains("ew reset")), "the job regrouped for the extra "
                    + "worker:\n" + String.join("\n", meanwhile));
            assertTrue(meanwhile.stream().filter(l -> l.contains("ew step=")).allMatch(l -> l.contains(" gen=" + gen
                    + " ")), "a step ran in another generation");
            assertTrue(meanwhile.stream().noneMatch(l -> l.startsWith("[" + extra + "] ew ")), "the extra worker ran");

            // A place frees: the extra worker takes it at the regroup, and the job finishes with it.
            int victim = 1;
            int killedAt = job.lines.size();
            job.kill(victim);
            String admitted = job.await(killedAt, 60, "the extra worker admitted", l -> l.startsWith("[" + extra
                    + "] ew ready") && l.contains(" size=3 "));
            int coordinator = Integer.parseInt(WorkerProcesses.field(admitted, "coordinator"));
            assertTrue(coordinator >= 0 && coordinator < 3, "the generation's coordinator is one of its ranks: "
                    + admitted);
            Files.createFile(stop);
            List<String> done = job.awaitEach(killedAt, 3, 90, "done", l -> l.contains("ew done"));
            assertTrue(done.stream().anyMatch(l -> l.startsWith("[" + extra + "] ")), "the extra worker finished");
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM);
            for (int i = 0; i <= extra; i++) {
                if (i != victim) {
                    assertEquals(0, job.waitExit(i, 30), "worker " + i);
                }
            }
            System.out.println("extra worker: " + waiting);
        }
    }

    @Test
    void aWorkerWaitingWhenTheJobEndsStopsWithAMessage() throws Exception {
        Path stop = Files.createTempDirectory("ew-stop").resolve("stop");
        try (WorkerProcesses job = new WorkerProcesses(2, 1, 2)) {
            job.training(DIM, 100000, 40).prop("ew.stopFile", stop);
            job.start();
            job.start();
            job.awaitEach(0, 2, 60, "step 4", l -> l.contains("ew step=4 "));
            int mark = job.lines.size();
            int extra = job.start();
            job.await(mark, 60, "the extra worker saying it waits", l -> l.startsWith("[" + extra + "] ")
                    && l.contains("waiting for a place"));
            Files.createFile(stop);
            job.awaitEach(mark, 2, 60, "done", l -> l.contains("ew done"));
            int status = job.waitExit(extra, 60);
            assertNotEquals(0, status, "the extra worker never trained");
            job.await(mark, 5, "the extra worker's reason", l -> l.startsWith("[" + extra + "] ")
                    && l.contains("ended while this worker waited for a place"));
        }
    }

    private static long lastStep(WorkerProcesses job, int before) {
        long step = 0;
        for (String l : job.lines.subList(0, before)) {
            if (l.contains("ew step=")) {
                step = Math.max(step, Long.parseLong(WorkerProcesses.field(l, "step")));
            }
        }
        return step;
    }
}
