package dev.kolo.samples.chaos;

import dev.kolo.checkpoint.CheckpointTool;
import dev.kolo.samples.chaos.ChaosJob.Worker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The fault-injection scenarios of {@code bench chaos}. Each starts the sample training job as separate worker
 * processes, injects one kind of fault, and returns a one-line detail when every pass criterion held, or throws
 * {@link ChaosFailure}: no hang (every wait is bounded by the scenario's deadline), no silent wrong result, equal
 * checksums on all survivors at equal (step, generation) and in the final {@code done} lines, no commit lost.
 */
final class ChaosScenarios {
    /** A scenario body. */
    interface Scenario {
        String run(ChaosScenarios s, long deadlineNanos) throws Exception;
    }

    /** The scenarios in priority order, with their deadline in seconds for {@code rounds}. */
    record Entry(String name, Scenario body, int baseSeconds, int perRoundSeconds) {
        long deadlineSeconds(int rounds) {
            return baseSeconds + (long) perRoundSeconds * rounds;
        }
    }

    static final Map<String, Entry> ALL = new LinkedHashMap<>();

    static {
        for (Entry e : List.of(
                new Entry("kill-during-allreduce", ChaosScenarios::killDuringAllreduce, 150, 45),
                new Entry("coordinator-killed", ChaosScenarios::coordinatorKilled, 240, 0),
                new Entry("sigterm-leave", ChaosScenarios::sigtermLeave, 240, 0),
                new Entry("sigstop-past-deadline", ChaosScenarios::sigstopPastDeadline, 240, 0),
                new Entry("crash-loop", ChaosScenarios::crashLoop, 300, 0),
                new Entry("crash-during-checkpoint", ChaosScenarios::crashDuringCheckpoint, 150, 60),
                new Entry("partition-3-2", ChaosNetworkScenarios::partition32, 420, 0),
                new Entry("slow-lossy-link", ChaosNetworkScenarios::slowLossyLink, 360, 0))) {
            ALL.put(e.name(), e);
        }
    }

    private final int rounds;
    private final List<String> baseArgs;
    final Random random;

    /**
     * @param rounds kills of the repeated scenarios
     * @param dataDir Fashion-MNIST directory for the workers, or null for their default
     */
    ChaosScenarios(int rounds, Path dataDir, long seed) {
        this.rounds = rounds;
        this.random = new Random(seed);
        List<String> args = new ArrayList<>(List.of("--epochs", "100", "--train-limit", "6000", "--batch-size", "16",
                "--hidden", "64,32", "--commit-every", "5", "--log-every", "100000", "--metrics-port", "0"));
        if (dataDir != null) {
            args.addAll(List.of("--data", dataDir.toString()));
        }
        this.baseArgs = List.copyOf(args);
    }

    List<String> args(long maxSteps, String... more) {
        List<String> a = new ArrayList<>(baseArgs);
        a.addAll(List.of("--max-steps", Long.toString(maxSteps)));
        a.addAll(List.of(more));
        return a;
    }

    // ------------------------------------------------------------------ scenarios

    /** SIGKILL a random worker at a random moment of a step, {@code rounds} times, a replacement after each. */
    static String killDuringAllreduce(ChaosScenarios s, long deadline) throws Exception {
        int done = 0;
        int jobs = 0;
        int compared = 0;
        int resets = 0;
        while (done < s.rounds) {
            jobs++;
            int left = s.rounds - done;
            try (ChaosJob job = new ChaosJob(4, 2, 4, s.args(60 + 150L * left), deadline)) {
                for (int r = 0; r < 4; r++) {
                    job.start(r);
                }
                job.await("4 workers training", () -> job.stepping(4, 4, 5));
                List<Worker> killed = new ArrayList<>();
                for (int round = 0; round < left && !finishing(job); round++) {
                    List<Worker> alive = job.alive();
                    Worker victim = alive.get(s.random.nextInt(alive.size()));
                    Map<Worker, Integer> before = resetCounts(job);
                    Thread.sleep(s.random.nextInt(300)); // mostly lands inside a gradient allreduce
                    if (finishing(job)) {
                        break;
                    }
                    victim.process.destroyForcibly();
                    killed.add(victim);
                    done++;
                    job.await("the survivors of round " + done + " to regroup (reset or done)", () -> {
                        for (Worker w : job.alive()) {
                            if (resetCounts(job).getOrDefault(w, 0) <= before.getOrDefault(w, 0)
                                    && !w.printed(l -> l.startsWith("kolo: done "))) {
                                return false;
                            }
                        }
                        return true;
                    });
                    failIfSurvivorFailed(job, killed);
                    if (finishing(job)) {
                        break;
                    }
                    Worker replacement = job.start(victim.rankHint);
                    job.await("replacement " + replacement.name + " to join (size 4 again)",
                            () -> finishing(job) || replacement.printed(l -> l.matches("kolo: step=.* size=4 .*"))
                                    && job.stepping(4, 4, 0));
                }
                // A replacement started just as the job ended finds nobody to join: it is not part of the result.
                job.await("the training workers to finish", () -> job.alive().stream()
                        .noneMatch(w -> w.printed(l -> l.startsWith("kolo: step="))));
                for (Worker late : job.alive()) {
                    late.process.destroyForcibly();
                    killed.add(late);
                }
                job.awaitAllExited();
                int finishers = checkExits(job, killed);
                ChaosLog log = job.log();
                compared += log.checkConsistent();
                log.checkDone(finishers);
                resets += log.resets().size();
            }
        }
        return done + " kills in " + jobs + " job(s), " + resets + " reset lines, " + compared
                + " (step,gen) points compared, done checksums equal";
    }

    /** SIGKILL the oldest worker (rank 0 at start, the coordinator). */
    static String coordinatorKilled(ChaosScenarios s, long deadline) throws Exception {
        try (ChaosJob job = new ChaosJob(4, 2, 4, s.args(120), deadline)) {
            Worker first = job.start(0);
            first.await(job, "w0 to form the cluster", l -> l.contains("coordinating job"));
            for (int r = 1; r < 4; r++) {
                job.start(r);
            }
            job.await("4 workers training", () -> job.stepping(4, 4, 10));
            first.process.destroyForcibly();
            job.awaitAllExited();
            checkExits(job, List.of(first));
            ChaosLog log = job.log();
            int compared = log.checkConsistent();
            String sum = log.checkDone(3);
            long lost = log.resets().stream().filter(r -> r.endsWith("worker_lost")).count();
            if (lost < 3) {
                throw new ChaosFailure("expected a worker_lost reset on each of 3 survivors, got " + log.resets());
            }
            return "3 survivors regrouped (" + lost + " worker_lost resets), " + compared + " points compared, done "
                    + sum;
        }
    }

    /** SIGTERM one worker: it leaves at its next commit with exit 0; the others go on without rollback. */
    static String sigtermLeave(ChaosScenarios s, long deadline) throws Exception {
        try (ChaosJob job = new ChaosJob(4, 2, 4, s.args(120), deadline)) {
            for (int r = 0; r < 4; r++) {
                job.start(r);
            }
            job.await("4 workers training", () -> job.stepping(4, 4, 10));
            Worker leaver = job.workers().get(3);
            long t0 = System.nanoTime();
            leaver.signal("TERM");
            int code = job.exitOf(leaver);
            double took = (System.nanoTime() - t0) / 1e9;
            if (code != 0 || !leaver.printed(l -> l.startsWith("kolo: left the job at commit "))) {
                throw new ChaosFailure("the SIGTERMed worker exited " + code + " without a clean leave: "
                        + leaver.tail());
            }
            job.awaitAllExited();
            checkExits(job, List.of());
            ChaosLog log = job.log();
            List<String> lost = log.resets().stream().filter(r -> r.endsWith("worker_lost")).toList();
            if (!lost.isEmpty()) {
                throw new ChaosFailure("a graceful leave caused rollbacks: " + lost);
            }
            int compared = log.checkConsistent();
            String sum = log.checkDone(3);
            return String.format(java.util.Locale.ROOT, "left with exit 0 in %.1f s, no worker_lost reset (%s), "
                    + "%d points compared, done %s", took, log.resets(), compared, sum);
        }
    }

    /** SIGSTOP one worker for longer than the heartbeat timeout, then SIGCONT. */
    static String sigstopPastDeadline(ChaosScenarios s, long deadline) throws Exception {
        try (ChaosJob job = new ChaosJob(4, 2, 4, s.args(160, "--heartbeat-timeout", "3"), deadline)) {
            // A fenced worker that cannot rejoin gives up after KOLO_ELASTIC_TIMEOUT (default 600 s, longer than
            // this scenario's deadline): 30 s here, so that the outcome "exit 3 with a message" is observable.
            job.env("KOLO_ELASTIC_TIMEOUT", "30");
            for (int r = 0; r < 4; r++) {
                job.start(r);
            }
            job.await("4 workers training", () -> job.stepping(4, 4, 10));
            Worker frozen = job.workers().get(2);
            frozen.signal("STOP");
            try {
                // The others must notice (heartbeat 3 s) and go on with 3 while it is frozen.
                job.await("the others to go on with 3 workers while w2 is stopped", () -> job.stepping(3, 3, 0));
                Thread.sleep(2000);
            } finally {
                frozen.signal("CONT");
            }
            long resumed = System.nanoTime();
            job.await("the frozen worker to finish or stop", () -> !frozen.process.isAlive());
            double frozenExit = (System.nanoTime() - resumed) / 1e9;
            job.awaitAllExited();
            int code = frozen.process.exitValue();
            String fate;
            if (code == 0 && frozen.printed(l -> l.startsWith("kolo: done "))) {
                fate = "rejoined and finished";
            } else if (code == 3 && !frozen.err.isEmpty()) {
                fate = "stopped with exit 3 (" + lastKoloLine(frozen.err) + ")";
            } else {
                throw new ChaosFailure("the frozen worker exited " + code + " without a done line or a clear error: "
                        + frozen.tail());
            }
            checkExits(job, List.of(frozen));
            ChaosLog log = job.log();
            int compared = log.checkConsistent();
            String sum = log.checkDone(3);
            return String.format(java.util.Locale.ROOT, "frozen worker %s %.1f s after SIGCONT; ", fate, frozenExit)
                    + compared + " points compared, done " + sum;
        }
    }

    /** A worker that is SIGKILLed right after each start (same worker id: a crash-looping pod). */
    static String crashLoop(ChaosScenarios s, long deadline) throws Exception {
        try (ChaosJob job = new ChaosJob(4, 2, 4, s.args(800), deadline)) {
            for (int r = 0; r < 3; r++) {
                job.start(r);
            }
            job.env("KOLO_WORKER_ID", job.name + "-crasher");
            List<Worker> crashed = new ArrayList<>();
            crashed.add(job.start(3));
            job.await("4 workers training", () -> job.stepping(4, 4, 5));
            crashed.get(0).process.destroyForcibly();
            int starts = 1;
            for (int i = 0; i < 4 && !finishing(job); i++) {
                Worker w = job.start(3);
                crashed.add(w);
                starts++;
                // Killed as soon as it has joined the cluster (or refused, or after 20 s at most).
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                job.await("crasher " + w.name + " to join", () -> w.printed(l -> l.startsWith("kolo: rank="))
                        || !w.process.isAlive() || System.nanoTime() > until);
                w.process.destroyForcibly();
                Thread.sleep(500);
            }
            job.awaitAllExited();
            checkExits(job, crashed);
            ChaosLog log = job.log();
            int compared = log.checkConsistent();
            String sum = log.checkDone(3);
            return starts + " crashing starts; survivors finished: " + log.resets().size() + " resets, " + compared
                    + " points compared, done " + sum;
        }
    }

    /**
     * Fixed job with a checkpoint directory: SIGKILL one or both workers while checkpoints are being written
     * (every 5 steps), verify the directory, restart: it must resume from a checkpoint and end equal.
     */
    static String crashDuringCheckpoint(ChaosScenarios s, long deadline) throws Exception {
        Path dir = Files.createTempDirectory("kolo-chaos-ckpt");
        try {
            long lastResume = 0;
            List<Long> resumes = new ArrayList<>();
            int kills = Math.max(1, Math.min(s.rounds, 3));
            long maxSeen = 0;
            for (int round = 0; round <= kills; round++) {
                boolean last = round == kills;
                String name = "round " + round;
                try (ChaosJob job = new ChaosJob(2, 0, 0, s.args(last ? maxSeen + 30 : 100000, "--checkpoint-dir",
                        dir.toString(), "--checkpoint-every", "5"), deadline)) {
                    Worker a = job.start(0);
                    Worker b = job.start(1);
                    if (round > 0) {
                        job.await("rank 0 to resume from a checkpoint",
                                () -> a.printed(l -> l.startsWith("train: resuming at step "))
                                        || b.printed(l -> l.startsWith("train: resuming at step "))
                                        || !a.process.isAlive());
                        String line = Stream.of(a, b).flatMap(w -> w.lines().stream())
                                .filter(l -> l.startsWith("train: resuming at step ")).findFirst()
                                .orElseThrow(() -> new ChaosFailure(name + ": no resume line: " + a.tail()));
                        long at = Long.parseLong(line.replaceAll("train: resuming at step (\\d+).*", "$1"));
                        if (at <= lastResume) {
                            throw new ChaosFailure(name + " resumed at step " + at
                                    + ", not after the previous resume point " + lastResume);
                        }
                        lastResume = at;
                        resumes.add(at);
                    }
                    if (last) {
                        job.awaitAllExited();
                        checkExits(job, List.of());
                        ChaosLog log = job.log();
                        log.checkConsistent();
                        String sum = log.checkDone(2);
                        verify(dir);
                        return kills + " crashes; resumed at steps " + resumes + "; checkpoint verify passed; done "
                                + sum;
                    }
                    long from = lastResume;
                    job.await("steps past the resume point", () -> job.stepping(2, 2, from + 15));
                    Thread.sleep(s.random.nextInt(400));
                    boolean both = round % 2 == 1;
                    a.process.destroyForcibly();
                    if (both) {
                        b.process.destroyForcibly();
                    }
                    job.awaitAllExited();
                    if (!both) {
                        int code = b.process.exitValue();
                        if (code != 3 || b.err.stream().noneMatch(l -> l.contains("resume from the newest valid "
                                + "checkpoint"))) {
                            throw new ChaosFailure("the survivor of a fixed job exited " + code
                                    + " without the documented message: " + b.tail());
                        }
                    }
                    job.log().checkConsistent();
                    maxSeen = Math.max(maxSeen, job.log().maxStep());
                    verify(dir);
                }
            }
            throw new IllegalStateException("unreachable");
        } finally {
            deleteTree(dir);
        }
    }

    // ------------------------------------------------------------------ helpers

    static void verify(Path dir) throws ChaosFailure {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new CheckpointTool().verify(dir, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        if (code != CheckpointTool.OK) {
            throw new ChaosFailure("checkpoint verify " + dir + " exited " + code + ": "
                    + err.toString(StandardCharsets.UTF_8).trim());
        }
    }

    /** Some worker printed its done line: the job is ending, no more faults. */
    private static boolean finishing(ChaosJob job) {
        return job.workers().stream().anyMatch(w -> w.printed(l -> l.startsWith("kolo: done ")));
    }

    private static Map<Worker, Integer> resetCounts(ChaosJob job) {
        Map<Worker, Integer> counts = new java.util.HashMap<>();
        for (Worker w : job.workers()) {
            counts.put(w, (int) w.lines().stream().filter(l -> l.startsWith("kolo: reset ")).count());
        }
        return counts;
    }

    private static void failIfSurvivorFailed(ChaosJob job, List<Worker> killed) throws ChaosFailure {
        for (Worker w : job.workers()) {
            if (!killed.contains(w) && !w.process.isAlive() && w.process.exitValue() != 0) {
                throw new ChaosFailure(w.name + " (not killed) exited " + w.process.exitValue() + ": " + w.tail());
            }
        }
    }

    /** Every worker not in {@code faulted} must have exited 0; returns how many did. */
    static int checkExits(ChaosJob job, List<Worker> faulted) throws ChaosFailure {
        int ok = 0;
        for (Worker w : job.workers()) {
            if (faulted.contains(w)) {
                continue;
            }
            int code = w.process.exitValue();
            if (code != 0) {
                throw new ChaosFailure(w.name + " exited " + code + ": " + w.tail());
            }
            ok++;
        }
        return ok;
    }

    static String lastKoloLine(List<String> lines) {
        synchronized (lines) {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).startsWith("kolo:")) {
                    return lines.get(i);
                }
            }
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory
        }
    }
}
