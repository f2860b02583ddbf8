package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four worker processes train with 16 MiB gradient allreduces; one is SIGKILLed while the other three are inside
 * one: it stops before it submits step 7's allreduce, and is killed once every other rank has submitted theirs (so
 * they wait inside it). The other three fail that allreduce, roll back to the last commit, regroup as three, hold
 * identical parameters, and finish with the result of an uninterrupted run.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KillOneOfFourTest {
    static final int DIM = 4 << 20; // 16 MiB of FLOAT32 per allreduce
    static final int STEPS = 30;
    static final int KILLED_AT_STEP = 7;
    static final int VICTIM_RANK = 2;

    @Test
    void survivorsInsideAnAllreduceRecoverAndFinish() throws Exception {
        try (WorkerProcesses job = new WorkerProcesses(4, 2, 4)) {
            job.training(DIM, STEPS, 30).prop("ew.pauseAt", KILLED_AT_STEP + "@" + VICTIM_RANK);
            job.startAll(4);
            String paused = job.await(0, 90, "rank " + VICTIM_RANK + " paused before step " + KILLED_AT_STEP,
                    l -> l.contains("ew paused step=" + KILLED_AT_STEP + " "));
            int victim = WorkerProcesses.index(paused);
            // The others are inside step 7's allreduce: they submitted it, and it cannot end without the victim.
            List<String> inside = job.awaitEach(0, 4, 60, "the others inside step " + KILLED_AT_STEP + "'s allreduce",
                    l -> l.contains("ew submitting step=" + KILLED_AT_STEP + " ") || l.startsWith("[" + victim + "] ")
                            && l.contains("ew paused"));
            assertEquals(4, inside.size());
            int mark = job.lines.size();
            long killedAt = System.currentTimeMillis();
            job.kill(victim);
            List<String> resets = job.awaitEach(mark, 3, 60, "reset after the kill",
                    l -> l.contains("ew reset reason=WORKER_LOST"));
            Checks.same(resets, "checksum", "after recovery");
            Checks.same(resets, "gen", "after recovery");
            resets.forEach(l -> assertEquals("3", WorkerProcesses.field(l, "size"), l));
            resets.forEach(l -> assertEquals("true", WorkerProcesses.field(l, "rolledBack"), l));
            int afterReset = job.lines.indexOf(resets.get(0));
            String firstStep = job.await(afterReset, 60, "a step after the recovery", l -> l.contains("ew step=")
                    && l.contains("size=3"));
            double recovery = (Long.parseLong(WorkerProcesses.field(firstStep, "t")) - killedAt) / 1000.0;
            System.out.printf("recovery after SIGKILL of 1 of 4: next step completed %.2f s after the kill%n", recovery);
            List<String> done = job.awaitEach(mark, 3, 90, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            for (int i = 0; i < 4; i++) {
                if (i != victim) {
                    assertEquals(0, job.waitExit(i, 30), "worker " + i);
                }
            }
        }
    }
}
