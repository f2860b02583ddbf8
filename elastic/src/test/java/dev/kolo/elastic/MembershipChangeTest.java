package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four workers (elastic, up to five). A fifth starts mid-run: every rank learns it at the same commit,
 * the ring grows to five without rollback, the newcomer receives the state (same checksum). Then one worker
 * gets SIGTERM: it leaves at the next commit, the others go on as four without rollback, and the result
 * matches an uninterrupted run.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class MembershipChangeTest {
    static final int DIM = 1 << 18;
    static final int STEPS = 70;

    @Test
    void workerJoinsAtACommitAndAnotherLeavesOnSigterm() throws Exception {
        try (WorkerProcesses job = new WorkerProcesses(4, 2, 5)) {
            job.training(DIM, STEPS, 120);
            job.startAll(4);
            job.awaitEach(0, 4, 60, "step 2", l -> l.contains("ew step=2 "));
            int mark = job.lines.size();
            long startedAt = System.currentTimeMillis();
            int fifth = job.start();
            List<String> grown = job.awaitEach(mark, 4, 60, "the ring growing to 5",
                    l -> l.contains("ew reset reason=MEMBERSHIP_CHANGED") && l.contains(" size=5 "));
            String joined = job.await(mark, 30, "the newcomer starting", l -> l.startsWith("[" + fifth + "] ew start"));
            double admitted = (System.currentTimeMillis() - startedAt) / 1000.0;
            grown.forEach(l -> assertEquals("false", WorkerProcesses.field(l, "rolledBack"), l));
            String sum = Checks.same(grown, "checksum", "after the join");
            assertEquals(sum, WorkerProcesses.field(joined, "checksum"), "the newcomer got other bytes: " + joined);
            assertEquals("5", WorkerProcesses.field(joined, "size"));
            noStepRepeated(job, mark, grown);
            System.out.printf("fifth worker admitted and synchronized %.1f s after its start%n", admitted);

            int leaver = 1;
            job.await(job.lines.size(), 30, "a step at size 5", l -> l.contains("ew step=") && l.contains(" size=5 "));
            mark = job.lines.size();
            job.signal(leaver, "TERM");
            job.await(mark, 30, "the leaver leaving", l -> l.startsWith("[" + leaver + "] ") && l.contains("left the job at commit"));
            List<String> shrunk = job.awaitEach(mark, 4, 60, "the ring shrinking to 4",
                    l -> l.contains("ew reset reason=MEMBERSHIP_CHANGED") && l.contains(" size=4 "));
            shrunk.forEach(l -> assertEquals("false", WorkerProcesses.field(l, "rolledBack"), l));
            Checks.same(shrunk, "checksum", "after the leave");
            noStepRepeated(job, mark, shrunk);
            int status = job.waitExit(leaver, 30);
            assertTrue(status == 143 || status == 0, "the leaver exited with " + status);

            List<String> done = job.awaitEach(mark, 4, 90, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            for (int i = 0; i <= fifth; i++) {
                if (i != leaver) {
                    assertEquals(0, job.waitExit(i, 30), "worker " + i);
                }
            }
        }
    }

    /** No rollback: training resumes at the very step where the reset's commit was taken. */
    private static void noStepRepeated(WorkerProcesses job, int from, List<String> resets) {
        long commit = Long.parseLong(WorkerProcesses.field(resets.get(0), "commit"));
        long lastStepBefore = 0;
        int resetAt = job.lines.indexOf(resets.get(0));
        for (int i = from; i < resetAt; i++) {
            String l = job.lines.get(i);
            if (l.contains("ew step=")) {
                lastStepBefore = Math.max(lastStepBefore, Long.parseLong(l.replaceAll(".*ew step=(\\d+).*", "$1")));
            }
        }
        assertEquals(lastStepBefore, commit * 2, "the membership change must happen at the commit of the last step "
                + "done (commit every 2 steps), with nothing redone");
    }
}
