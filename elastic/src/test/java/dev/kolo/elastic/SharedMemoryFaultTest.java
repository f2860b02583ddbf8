package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.transport.shm.SharedSegment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three worker processes of one host, every pair through shared memory, training with 16 MiB gradient allreduces.
 * One is SIGKILLed, or SIGSTOPped, in the middle of them: the other two fail their op as over TCP, by what
 * detects it there (a killed peer's doorbell socket closes, and each survivor's failure names that closed data
 * connection; a stopped one is dropped by membership, whose loss each survivor's failure names, never by the data
 * plane's progress deadline), roll back, regroup over new segments and finish with equal parameters, those of an
 * uninterrupted run. At no moment, running or after any end, does {@code /dev/shm} hold a segment of the job: a
 * segment has no name from the moment it is made.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class SharedMemoryFaultTest {
    static final int DIM = 4 << 20; // 16 MiB of FLOAT32 per allreduce
    static final int STEPS = 24;
    static final Path SHM = Path.of("/dev/shm");

    private static WorkerProcesses job() {
        return new WorkerProcesses(3, 2, 3).training(DIM, STEPS, 0)
                // The data plane says which peers it reaches through shared memory, per generation.
                .prop("org.slf4j.simpleLogger.log.dev.kolo.runtime.internal.transport.connect.Endpoint", "info");
    }

    @Test
    void aKilledRanksPeersFailWithinTheDeadlineRegroupAndFinish() throws Exception {
        try (WorkerProcesses job = job()) {
            job.startAll(3);
            awaitSharedMemory(job, 0, 3, 2);
            job.awaitEach(0, 3, 60, "step 3", l -> l.contains("ew step=3 "));
            assertEquals(List.of(), segments(job), "segments of a running job");
            int victim = 1;
            int mark = job.lines.size();
            long killedAt = System.currentTimeMillis();
            job.kill(victim);
            List<String> resets = job.awaitEach(mark, 2, 30, "the others' reset after the kill",
                    l -> l.contains("ew reset reason=WORKER_LOST"));
            for (String r : resets) {
                double after = (Long.parseLong(WorkerProcesses.field(r, "t")) - killedAt) / 1000.0;
                System.out.printf(java.util.Locale.ROOT, "shared memory, SIGKILL: reset %.2f s after the kill%n", after);
            }
            // What ended each survivor's generation: the killed rank's data connection closing (its doorbell), seen
            // first-hand by at least one survivor, the others maybe told by its abort notice; never membership's
            // heartbeat nor the progress deadline.
            String victimRank = rankOf(job, victim);
            int firstHand = 0;
            for (String why : causes(job, mark, victim)) {
                boolean direct = why.contains("data connection to rank " + victimRank + " ");
                boolean relayed = why.contains("rank " + victimRank + " (") && why.contains("aborted its op for that loss");
                firstHand += direct ? 1 : 0;
                assertTrue((direct || relayed) && !why.contains("made no progress"),
                        "a survivor's op did not fail by the killed rank's closed connection: " + why);
            }
            assertTrue(firstHand > 0, "no survivor saw the killed rank's connection close");
            Checks.same(resets, "checksum", "after the loss");
            awaitSharedMemory(job, mark, 2, 1); // the new generation's pair has new segments
            List<String> done = job.awaitEach(mark, 2, 90, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            for (int i = 0; i < 3; i++) {
                if (i != victim) {
                    assertEquals(0, job.waitExit(i, 30), "worker " + i);
                }
            }
            assertEquals(List.of(), segments(job), "segments after a rank was killed and the others ended");
        }
    }

    @Test
    void aStoppedRanksPeersFailWithinTheDeadlineRegroupAndFinish() throws Exception {
        try (WorkerProcesses job = job()) {
            job.startAll(3);
            awaitSharedMemory(job, 0, 3, 2);
            job.awaitEach(0, 3, 60, "step 3", l -> l.contains("ew step=3 "));
            int frozen = 2;
            int mark = job.lines.size();
            long stoppedAt = System.currentTimeMillis();
            job.signal(frozen, "STOP");
            List<String> resets = job.awaitEach(mark, 2, 30, "the others' reset after the stop",
                    l -> l.contains("ew reset reason=WORKER_LOST") && !l.startsWith("[" + frozen + "]"));
            for (String r : resets) {
                double after = (Long.parseLong(WorkerProcesses.field(r, "t")) - stoppedAt) / 1000.0;
                System.out.printf(java.util.Locale.ROOT, "shared memory, SIGSTOP: reset %.2f s after the stop%n", after);
            }
            // What ended each survivor's generation: membership dropping the stopped process (its shared memory and
            // socket stay open, so only membership can tell), not the data plane's progress deadline.
            // A survivor may learn it from the other survivor, whose abort closed its connections first.
            List<String> causes = causes(job, mark, frozen);
            String lostByMembership = "pid " + job.pid(frozen) + ") left the cluster";
            assertTrue(causes.stream().anyMatch(why -> why.contains(lostByMembership)), "no survivor's op failed by "
                    + "membership's loss of the stopped process: " + causes);
            for (String why : causes) {
                assertTrue(why.contains(lostByMembership) || why.contains("data connection to rank ")
                        && !why.contains("made no progress"), "a survivor's op failed otherwise: " + why);
            }
            Checks.same(resets, "checksum", "after the loss");
            awaitSharedMemory(job, mark, 2, 1);
            job.kill(frozen); // it never wakes: its mappings go with it
            List<String> done = job.awaitEach(mark, 2, 90, "done", l -> l.contains("ew done"));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM, STEPS);
            for (int i = 0; i < 3; i++) {
                if (i != frozen) {
                    assertEquals(0, job.waitExit(i, 30), "worker " + i);
                }
            }
            assertEquals(List.of(), segments(job), "segments after a rank was stopped, then killed");
        }
    }

    /** @return each survivor's account of why its generation ended (its rollback's warning), from {@code mark} on */
    private static List<String> causes(WorkerProcesses job, int mark, int gone) throws InterruptedException {
        return job.awaitEach(mark, 2, 30, "the survivors' rollbacks", l -> !l.startsWith("[" + gone + "] ")
                && l.contains("WARN dev.kolo.elastic.ElasticRun") && l.contains("rolled back to commit"));
    }

    /** @return the rank worker {@code index} had in the first generation */
    private static String rankOf(WorkerProcesses job, int index) {
        return job.lines.stream().filter(l -> l.startsWith("[" + index + "] ") && l.contains("ew ready rank="))
                .map(l -> WorkerProcesses.field(l, "rank")).findFirst()
                .orElseThrow(() -> new AssertionError("worker " + index + " never said its rank"));
    }

    /** Waits until {@code ranks} workers said they reach {@code peers} ranks through shared memory. */
    private static void awaitSharedMemory(WorkerProcesses job, int from, int ranks, int peers)
            throws InterruptedException {
        String reaches = peers == 1 ? "reaches rank [" : "reaches ranks [";
        List<String> lines = job.awaitEach(from, ranks, 60, "shared memory with " + peers + " peers",
                l -> l.contains(reaches) && l.contains("through shared memory"));
        for (String l : lines) {
            String list = l.substring(l.indexOf('[', l.indexOf("reaches")) + 1, l.indexOf(']', l.indexOf("reaches")));
            assertEquals(peers, list.split(",").length, l);
        }
    }

    private static List<String> segments(WorkerProcesses job) throws IOException {
        String prefix = SharedSegment.jobPrefix(job.job);
        try (Stream<Path> files = Files.list(SHM)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).toList();
        }
    }
}
