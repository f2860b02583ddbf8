package dev.kolo.samples.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.WorkerProcess;
import dev.kolo.samples.netns.NetnsLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a pod (or node) failure does to the sample job: separate {@code worker.jar} processes, each in its own
 * network namespace when run as root ({@link NetnsLab}; loopback processes otherwise, said in the output),
 * finding each other through {@code --discovery members}. A "node" dies the hard way: its link goes down
 * first (nothing it sends arrives any more, not even a reset), then its process is SIGKILLed and its
 * namespace deleted, so the others detect it by the heartbeat timeout, as on a real cluster.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class PodRestartIT {
    private static final Pattern STEP = Pattern.compile("kolo: step=(\\d+) epoch=\\d+ size=(\\d+) gen=(\\d+) "
            + "checksum=([0-9a-f]{16})");
    private static final Pattern DONE = Pattern.compile("kolo: done rank=(\\d+) size=(\\d+) epochs=(\\d+) "
            + "test_accuracy=(0\\.\\d{4}) checksum=([0-9a-f]{16})");

    /** Elastic (np 3, min-np 2): one node dies mid-run; the other two regroup and finish with equal parameters. */
    @Test
    void elasticJobFinishesWithTheSurvivorsOfANodeFailure() throws Exception {
        try (NetnsLab lab = NetnsLab.create(3); Workers w = new Workers()) {
            System.out.println("PodRestartIT (elastic): " + lab.describe());
            String job = "podit-" + UUID.randomUUID().toString().substring(0, 8);
            for (int node = 0; node < 3; node++) {
                w.add(start(lab, node, job, "--np", "3", "--min-np", "2", "--epochs", "2", "--train-limit", "6000",
                        "--batch-size", "32", "--commit-every", "5", "--log-every", "20"));
            }
            w.awaitEach(l -> l.startsWith("kolo: step=20 "), 100, "every worker at step 20");
            int victim = w.nodeWithRank(1);
            long killed = kill(lab, w, victim);
            List<Integer> survivors = w.others(victim);
            for (int node : survivors) {
                w.get(node).awaitLine(l -> l.startsWith("kolo: step=") && l.contains(" size=2 "), 60);
            }
            System.out.printf(Locale.ROOT, "PodRestartIT (elastic): survivors completed a step of the new "
                    + "generation %.2f s after the node failure%n", (System.nanoTime() - killed) / 1e9);
            Set<String> checksums = new HashSet<>();
            for (int node : survivors) {
                WorkerProcess p = w.get(node);
                assertEquals(0, p.exitCode(90), p.transcript());
                assertEquals(1, p.lines(l -> l.startsWith("kolo: reset reason=worker_lost size=2 ")).size(),
                        p.transcript());
                // Steps continue from the commit the survivors rolled back to, in the new generation.
                List<long[]> steps = steps(p);
                long lastOfThree = steps.stream().filter(s -> s[1] == 3).mapToLong(s -> s[0]).max().orElseThrow();
                long firstOfTwo = steps.stream().filter(s -> s[1] == 2).mapToLong(s -> s[0]).min().orElseThrow();
                assertTrue(firstOfTwo >= 20 && firstOfTwo <= lastOfThree + 5, "first step after the reset "
                        + firstOfTwo + ", last before " + lastOfThree + "\n" + p.transcript());
                Matcher done = last(p, DONE);
                assertEquals("2", done.group(2), "finished with 2 workers");
                assertEquals("2", done.group(3));
                assertTrue(Double.parseDouble(done.group(4)) > 0.6, "accuracy far above chance: " + done.group());
                checksums.add(done.group(5));
            }
            assertEquals(1, checksums.size(), "every survivor ends with the same parameters: " + checksums);
            // Both survivors saw the same parameters at every commit of the new generation.
            assertEquals(stepsOfSize(w.get(survivors.get(0)), 2), stepsOfSize(w.get(survivors.get(1)), 2));
        }
    }

    /**
     * Fixed (np 2, checkpoints): the node of rank 0 (the checkpoint writer) dies; the other stops with a clear
     * error; both started again resume from the newest valid checkpoint, steps continuing, and finish.
     */
    @Test
    void fixedJobStopsAndARestartResumesFromTheNewestCheckpoint(@TempDir Path dir) throws Exception {
        String[] args = {"--np", "2", "--epochs", "1", "--train-limit", "6000", "--batch-size", "32",
                "--commit-every", "5", "--checkpoint-every", "10", "--log-every", "20", "--checkpoint-dir",
                dir.toString()};
        try (NetnsLab lab = NetnsLab.create(2)) {
            System.out.println("PodRestartIT (fixed): " + lab.describe());
            String job = "podit-" + UUID.randomUUID().toString().substring(0, 8);
            int victim;
            long lastStep;
            try (Workers w = new Workers()) {
                for (int node = 0; node < 2; node++) {
                    w.add(start(lab, node, job, args));
                }
                w.awaitEach(l -> l.startsWith("kolo: step=30 "), 100, "every worker at step 30");
                assertTrue(checkpoints(dir) > 0, "a checkpoint by step 30");
                victim = w.nodeWithRank(0);
                int survivor = w.others(victim).get(0);
                long killed = kill(lab, w, victim);
                WorkerProcess s = w.get(survivor);
                assertNotEquals(0, s.exitCode(60), s.transcript());
                System.out.printf(Locale.ROOT, "PodRestartIT (fixed): the survivor stopped %.2f s after the node "
                        + "failure%n", (System.nanoTime() - killed) / 1e9);
                String err = String.join("\n", s.err);
                assertTrue(err.contains("kolo: rank 0 ") && err.contains("was lost") && err.contains("not elastic")
                        && err.contains("resume from the newest valid checkpoint"), s.transcript());
                lastStep = steps(s).stream().mapToLong(x -> x[0]).max().orElseThrow();
            }
            lab.replace(victim);
            try (Workers w = new Workers()) {
                for (int node = 0; node < 2; node++) {
                    w.add(start(lab, node, job, args));
                }
                Set<String> checksums = new HashSet<>();
                long resumedAt = -1;
                for (int node = 0; node < 2; node++) {
                    WorkerProcess p = w.get(node);
                    assertEquals(0, p.exitCode(100), p.transcript());
                    Matcher done = last(p, DONE);
                    assertEquals("1", done.group(3));
                    assertTrue(Double.parseDouble(done.group(4)) > 0.6, "accuracy far above chance: " + done.group());
                    checksums.add(done.group(5));
                    long first = steps(p).get(0)[0];
                    List<String> resumed = p.lines(l -> l.startsWith("train: resuming at step "));
                    if (!resumed.isEmpty()) {
                        resumedAt = Long.parseLong(resumed.get(0).replaceAll("train: resuming at step (\\d+) .*", "$1"));
                        assertEquals(resumedAt + 5, first, "the step counter continues\n" + p.transcript());
                    }
                }
                assertEquals(1, checksums.size(), "both end with the same parameters: " + checksums);
                assertTrue(resumedAt >= 10 && resumedAt % 10 == 0 && resumedAt <= lastStep + 5,
                        "resumed at " + resumedAt + " (checkpoints every 10 steps; the survivor reached " + lastStep
                                + ")");
                System.out.println("PodRestartIT (fixed): resumed at step " + resumedAt + " after the job had "
                        + "reached step " + lastStep);
            }
        }
    }

    /** Per test run; with the job name appended, each job has its own secret. */
    private static final String SECRET = java.util.UUID.randomUUID() + "-";

    private static WorkerProcess start(NetnsLab lab, int node, String job, String... training) throws Exception {
        List<String> args = new ArrayList<>(List.of("--job", job, "--discovery", "members", "--members",
                lab.members(), "--host", lab.address(node), "--cluster-port", Integer.toString(lab.clusterPort(node)),
                "--metrics-port", "0", "--heartbeat-timeout", "3", "--rendezvous-timeout", "90"));
        args.addAll(List.of(training));
        // Bounds a regrouping that cannot succeed, so a broken job fails instead of waiting 10 minutes. Members
        // discovery needs the job's secret, as on a real cluster: the workers authenticate across the namespaces.
        return WorkerProcess.start(lab.exec(node), Map.of("KOLO_ELASTIC_TIMEOUT", "60", "KOLO_JOB_SECRET",
                SECRET + job), args);
    }

    /** The node fails: link down, process SIGKILLed, namespace deleted. @return System.nanoTime() of the cut */
    private static long kill(NetnsLab lab, Workers w, int node) throws Exception {
        long at = System.nanoTime();
        lab.cut(node);
        WorkerProcess p = w.get(node);
        p.process.destroyForcibly();
        assertTrue(p.process.waitFor(10, TimeUnit.SECONDS), "the killed worker exits");
        lab.remove(node);
        return at;
    }

    /** @return {step, size, generation} of every progress line, in order */
    private static List<long[]> steps(WorkerProcess p) {
        List<long[]> out = new ArrayList<>();
        for (String l : p.lines(l -> l.startsWith("kolo: step="))) {
            Matcher m = STEP.matcher(l);
            assertTrue(m.matches(), "progress line format: " + l);
            out.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3))});
        }
        assertTrue(!out.isEmpty(), "no progress lines\n" + p.transcript());
        return out;
    }

    private static List<String> stepsOfSize(WorkerProcess p, int size) {
        return p.lines(l -> l.startsWith("kolo: step=") && l.contains(" size=" + size + " ")).stream()
                .map(l -> l.replaceAll(" gen=\\d+", "")).toList();
    }

    private static Matcher last(WorkerProcess p, Pattern pattern) {
        String line = p.out.get(p.out.size() - 1);
        Matcher m = pattern.matcher(line);
        assertTrue(m.matches(), "last line must be the summary, got '" + line + "'\n" + p.transcript());
        return m;
    }

    private static long checkpoints(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("ckpt-")).count();
        }
    }

    /** The worker processes of one run, by node; all killed when closed. */
    private static final class Workers implements AutoCloseable {
        private final List<WorkerProcess> all = new ArrayList<>();

        void add(WorkerProcess p) {
            all.add(p);
        }

        WorkerProcess get(int node) {
            return all.get(node);
        }

        List<Integer> others(int node) {
            List<Integer> o = new ArrayList<>();
            for (int i = 0; i < all.size(); i++) {
                if (i != node) {
                    o.add(i);
                }
            }
            return o;
        }

        int nodeWithRank(int rank) {
            for (int i = 0; i < all.size(); i++) {
                if (!all.get(i).lines(l -> l.startsWith("kolo: rank=" + rank + " ")).isEmpty()) {
                    return i;
                }
            }
            throw new AssertionError("no worker has rank " + rank + "\n" + transcripts());
        }

        void awaitEach(Predicate<String> match, long seconds, String what) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (WorkerProcess p : all) {
                while (p.lines(match).isEmpty()) {
                    if (System.nanoTime() > deadline || !p.process.isAlive() && p.lines(match).isEmpty()) {
                        throw new AssertionError("timed out waiting for " + what + "\n" + transcripts());
                    }
                    Thread.sleep(50);
                }
            }
        }

        String transcripts() {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < all.size(); i++) {
                b.append("=== node ").append(i).append('\n').append(all.get(i).transcript()).append('\n');
            }
            return b.toString();
        }

        @Override
        public void close() {
            all.forEach(WorkerProcess::close);
            for (WorkerProcess p : all) {
                try {
                    p.process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
