package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four worker processes train with 16 MiB gradient allreduces; one is SIGKILLed mid-run. The other three
 * roll back to the last commit, regroup as three, hold identical parameters, and finish with the result of
 * an uninterrupted run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KillOneOfFourTest {
    static final int DIM = 4 << 20; // 16 MiB of FLOAT32 per allreduce
    static final int STEPS = 30;

    @Test
    void survivorsRecoverWithinSecondsAndFinish() throws Exception {
        try (WorkerProcesses job = new WorkerProcesses(4, 2, 4)) {
            job.training(DIM, STEPS, 30);
            job.startAll(4);
            job.awaitEach(0, 4, 60, "step 6", l -> l.contains("ew step=6 "));
            int victim = 2;
            Thread.sleep(60 + new java.util.Random().nextInt(120)); // land inside a gradient allreduce, mostly
            int mark = job.lines.size();
            long killedAt = System.currentTimeMillis();
            job.kill(victim);
            List<String> resets = job.awaitEach(mark, 3, 30, "reset after the kill",
                    l -> l.contains("ew reset reason=WORKER_LOST"));
            Checks.same(resets, "checksum", "after recovery");
            Checks.same(resets, "gen", "after recovery");
            resets.forEach(l -> assertEquals("3", WorkerProcesses.field(l, "size"), l));
            resets.forEach(l -> assertEquals("true", WorkerProcesses.field(l, "rolledBack"), l));
            int afterReset = job.lines.indexOf(resets.get(0));
            String firstStep = job.await(afterReset, 30, "a step after the recovery", l -> l.contains("ew step=")
                    && l.contains("size=3"));
            double recovery = (Long.parseLong(WorkerProcesses.field(firstStep, "t")) - killedAt) / 1000.0;
            List<String> done = job.awaitEach(mark, 3, 60, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            System.out.printf("recovery after SIGKILL of 1 of 4: next step completed %.2f s after the kill%n", recovery);
            assertTrue(recovery < 10, "recovery took " + recovery + " s");
            for (int i = 0; i < 4; i++) {
                if (i != victim) {
                    assertEquals(0, job.waitExit(i, 20), "worker " + i);
                }
            }
        }
    }
}
