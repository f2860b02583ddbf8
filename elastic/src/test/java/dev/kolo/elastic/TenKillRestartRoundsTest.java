package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ten rounds in a row: SIGKILL a worker of a three-worker elastic job and start a replacement at once.
 * Each round the replacement must be back in the ring (synchronized, same checksum) within 10 s of its
 * start; a worker that lives through all rounds must not accumulate threads (counted per thread group, so the
 * libraries' on-demand pools are told apart from a leak) or open files; the job
 * completes with an uninterrupted run's result.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class TenKillRestartRoundsTest {
    static final int DIM = 1 << 14;

    @Test
    void tenRoundsNoHangNoLeak() throws Exception {
        Path stop = Files.createTempDirectory("ew-rounds").resolve("stop");
        try (WorkerProcesses job = new WorkerProcesses(3, 2, 3)) {
            job.training(DIM, 1_000_000, 40).prop("ew.stopFile", stop);
            List<Integer> alive = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                alive.add(job.start());
            }
            job.awaitEach(0, 3, 60, "step 2", l -> l.contains("ew step=2 "));
            List<Double> backIn = new ArrayList<>();
            List<String> keeperResets = new ArrayList<>();
            int keeper = alive.get(0); // never killed: watched for leaks
            for (int round = 1; round <= 10; round++) {
                int victim = alive.get(1 + (round % 2));
                int mark = job.lines.size();
                job.kill(victim);
                long started = System.currentTimeMillis();
                int fresh = job.start();
                alive.set(alive.indexOf(victim), fresh);
                String in = job.await(mark, 30, "round " + round + ": the replacement in the ring",
                        l -> l.startsWith("[" + fresh + "] ew start") && l.contains(" size=3 "));
                backIn.add((System.currentTimeMillis() - started) / 1000.0);
                List<String> ring = job.awaitEach(mark, 3, 30, "round " + round + ": three in the ring",
                        l -> (l.contains("ew reset") || l.contains("ew start")) && l.contains(" size=3 ")
                                && l.contains(" gen=" + WorkerProcesses.field(in, "gen") + " "));
                Checks.same(ring, "checksum", "round " + round);
                ring.stream().filter(l -> WorkerProcesses.index(l) == keeper).forEach(keeperResets::add);
                assertEquals(137, job.waitExit(victim, 10), "killed worker's status");
            }
            Files.createFile(stop);
            List<String> done = job.awaitEach(0, 3, 60, "done",
                    l -> l.contains("ew done") && alive.contains(WorkerProcesses.index(l)));
            Checks.same(done, "checksum", "final parameters");
            Checks.matchesReference(done.get(0), DIM);
            for (int i : alive) {
                assertEquals(0, job.waitExit(i, 30), "worker " + i);
            }
            System.out.println("replacement back in the ring after (s): " + backIn);
            // Pools warm up over the first rounds; after that the counts must stay flat (no per-round leak). The
            // check is per thread group: a group that grows past its rounds 1-5 high is a leak, except the
            // libraries' own elastic pools, which grow on demand up to a bound and shrink when idle (Vert.x's worker
            // pool of 20, Hazelcast's cached and async executors whose idle threads end after 60 s, the JDK's
            // common pool). Kolo's own threads must stay exactly as they were.
            int half = keeperResets.size() / 2;
            Map<String, Integer> firstHalfHigh = new TreeMap<>();
            keeperResets.subList(0, half).forEach(l -> pools(l).forEach((g, n) -> firstHalfHigh.merge(g, n, Math::max)));
            String last = keeperResets.get(keeperResets.size() - 1);
            List<String> grown = new ArrayList<>();
            pools(last).forEach((group, n) -> {
                int before = firstHalfHigh.getOrDefault(group, 0);
                boolean onDemandPool = group.startsWith("vert.x-worker-thread") || group.contains(".cached.thread")
                        || group.contains(".async.thread") || group.startsWith("vert.x-internal-blocking")
                        || group.startsWith("ForkJoinPool");
                boolean bounded = !group.startsWith("vert.x-worker-thread") || n <= 20;
                if ((n > before && !onDemandPool) || !bounded) {
                    grown.add(group + " " + before + " -> " + n);
                }
            });
            long fdsFirstHalf = keeperResets.subList(0, half).stream()
                    .mapToLong(l -> Long.parseLong(WorkerProcesses.field(l, "fds"))).max().orElseThrow();
            long fdsLast = Long.parseLong(WorkerProcesses.field(last, "fds"));
            System.out.println("long-lived worker: thread groups grown after rounds 1-5: " + grown + "; open files max "
                    + fdsFirstHalf + ", then " + fdsLast);
            assertTrue(grown.isEmpty(), "thread groups grew over rounds 6-10 (a leak per round): " + grown);
            assertTrue(fdsLast <= fdsFirstHalf + 6, "open files grew from " + fdsFirstHalf + " to " + fdsLast);
            backIn.sort(null);
            assertTrue(backIn.get(backIn.size() / 2) <= 10, "median time back in the ring " + backIn);
        }
    }

    /** The worker's {@code pools=} field: thread-name group (numbers masked) to live count. */
    private static Map<String, Integer> pools(String line) {
        Map<String, Integer> byGroup = new TreeMap<>();
        for (String entry : WorkerProcesses.field(line, "pools").split(",")) {
            int colon = entry.lastIndexOf(':');
            byGroup.put(entry.substring(0, colon), Integer.parseInt(entry.substring(colon + 1)));
        }
        return byGroup;
    }
}
