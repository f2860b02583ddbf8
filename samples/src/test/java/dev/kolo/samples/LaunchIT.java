package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code worker.jar launch}: real worker processes, their exit status, and that none is left behind. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LaunchIT {

    @Test
    void threeWorkersRendezvousTrainAndExitZero() throws Exception {
        // A short run of the sample training: the full default run takes minutes.
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "3", "--", "--max-steps", "10",
                "--log-every", "5")) {
            int code = launch.exitCode(120);
            assertEquals(0, code, launch.transcript());
            List<String> ranks = launch.lines(l -> l.matches("\\[\\d] kolo: rank=\\d+ size=3 .*"));
            assertEquals(3, ranks.size(), launch.transcript());
            Set<String> distinct = ranks.stream().map(l -> l.replaceAll(".*kolo: rank=(\\d+).*", "$1"))
                    .collect(Collectors.toSet());
            assertEquals(Set.of("0", "1", "2"), distinct);
            // The [prefix] is the worker's rank.
            ranks.forEach(l -> assertEquals(l.substring(1, 2), l.replaceAll(".*kolo: rank=(\\d+).*", "$1")));
            assertEquals(3, launch.lines(l -> l.contains("kolo: barrier passed")).size());
            // The job's page (the coordinator's, on the default metrics port or the next free one) is named once.
            assertEquals(1, launch.lines(l -> l.matches("\\[launch] the job has formed; watch it live at "
                    + "http://127\\.0\\.0\\.1:\\d+/")).size(), launch.transcript());
            assertEquals(1, launch.lines(l -> l.matches("\\[0] epoch 1 step 5/\\d+ samples/s \\d+ loss .*")).size(),
                    launch.transcript());
            assertEquals(1, launch.lines(l -> l.matches("\\[0] epoch 1 done: test_accuracy=0\\.\\d{4} .*")).size(),
                    launch.transcript());
            // Each worker's last line is its summary, and all agree on the parameters' checksum.
            assertSummariesAgree(launch, 3, rank -> "kolo: done rank=" + rank
                    + " size=3 epochs=1 test_accuracy=0\\.\\d{4} checksum=[0-9a-f]{16}");
        }
    }

    /** {@code --reduce-op adasum}: the sample combines the gradients by Adasum; the workers end equal. */
    @Test
    void adasumTrainingEndsWithEqualParameters() throws Exception {
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "3", "--", "--max-steps", "10",
                "--log-every", "5", "--reduce-op", "adasum")) {
            assertEquals(0, launch.exitCode(120), launch.transcript());
            assertEquals(1, launch.lines(l -> l.startsWith("[0] train: ") && l.contains("; gradients adasum;"))
                    .size(), launch.transcript());
            assertSummariesAgree(launch, 3, rank -> "kolo: done rank=" + rank
                    + " size=3 epochs=1 test_accuracy=0\\.\\d{4} checksum=[0-9a-f]{16}");
        }
    }

    /**
     * Elastic launch (np 4, min-np 2): SIGTERM makes worker 3 leave at its next commit with exit 0 and the others
     * go on without rollback; then worker 2 is SIGKILLed: the launch goes on with the last two, which roll back
     * to their last commit, finish with equal checksums, and the launch exits 0 (3 of 4 workers exited 0).
     */
    @Test
    void elasticLaunchSurvivesAGracefulLeaveAndAKill() throws Exception {
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "4", "--min-np", "2", "--",
                "--epochs", "1", "--train-limit", "20000", "--batch-size", "32", "--commit-every", "5",
                "--log-every", "50", "--metrics-port", "0")) {
            List<Long> pids = awaitWorkerPids(launch, 4);
            launch.awaitLine(l -> l.startsWith("[3] kolo: step=10 "), 120);
            new ProcessBuilder("kill", "-TERM", Long.toString(pids.get(3))).start().waitFor();
            // Worker 2 is killed as soon as the three train on: the leaver may report its leave only after its
            // close, seconds later, by when a short job would be done.
            String reset = launch.awaitLine(l -> l.startsWith("[0] kolo: reset reason=membership_changed size=3 "), 60);
            launch.awaitLine(l -> l.matches("\\[2] kolo: step=\\d+ epoch=\\d+ size=3 .*"), 60);
            ProcessHandle.of(pids.get(2)).ifPresent(ProcessHandle::destroyForcibly);
            String left = launch.awaitLine(l -> l.startsWith("[3] kolo: left the job at commit "), 60);
            long commit = Long.parseLong(left.replaceAll(".*at commit (\\d+) .*", "$1"));
            long step = Long.parseLong(reset.replaceAll(".* step=(\\d+)$", "$1"));
            assertEquals(commit * 5, step, "no rollback after a leave: " + left + " / " + reset);
            int code = launch.exitCode(150);
            assertEquals(0, code, launch.transcript());
            assertEquals(1, launch.lines(l -> l.contains("worker 2 exited with status 137; the elastic job goes on"))
                    .size(), launch.transcript());
            assertTrue(launch.lines(l -> l.contains("worker 3 exited")).isEmpty(), "the leaver exits 0\n"
                    + launch.transcript());
            assertEquals(2, launch.lines(l -> l.matches("\\[[01]] kolo: reset reason=worker_lost size=2 .*")).size(),
                    launch.transcript());
            assertSummariesAgree(launch, 2, w -> "kolo: done rank=\\d size=2 epochs=1 test_accuracy=0\\.\\d{4} "
                    + "checksum=[0-9a-f]{16}");
            assertTrue(launch.lines(l -> l.contains("3 of 4 workers done (elastic)")).size() == 1, launch.transcript());
        }
    }

    @Test
    void firstFailureEndsTheOthers() throws Exception {
        // Three workers of a job that waits for four: they sit in the rendezvous until one is killed.
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "3", "--grace", "2", "--",
                "--np", "4", "--rendezvous-timeout", "150")) {
            List<Long> pids = awaitWorkerPids(launch, 3);
            long victim = pids.get(1);
            ProcessHandle.of(victim).ifPresent(ProcessHandle::destroyForcibly);
            long killedAt = System.nanoTime();
            int code = launch.exitCode(60);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            assertNotEquals(0, code, launch.transcript());
            assertTrue(launch.lines(l -> l.contains("worker 1 failed")).size() == 1, launch.transcript());
            assertNoneAlive(pids);
            System.out.println("launch ended " + tookMillis + " ms after worker 1 was killed");
        }
    }

    @ParameterizedTest
    @CsvSource({"INT, 130", "TERM, 143"})
    void aSignalStopsEveryWorkerAndIsReportedAsAsked(String signal, int status) throws Exception {
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "2", "--grace", "2", "--",
                "--np", "3", "--rendezvous-timeout", "150")) {
            List<Long> pids = awaitWorkerPids(launch, 2);
            new ProcessBuilder("kill", "-" + signal, Long.toString(launch.process.pid())).start().waitFor();
            assertEquals(status, launch.exitCode(60), launch.transcript());
            assertNoneAlive(pids);
            List<String> lines = launch.lines(l -> l.startsWith("[launch]"));
            assertTrue(lines.get(lines.size() - 1).matches("\\[launch] job \\S+: stopped by SIG" + signal
                    + " \\(0 of 2 workers had finished\\)"), launch.transcript());
            assertTrue(launch.lines(l -> l.contains("failed with exit status")).isEmpty(), launch.transcript());
        }
    }

    @Test
    void workersDoNotOutliveAKilledLauncher() throws Exception {
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "2", "--",
                "--np", "3", "--rendezvous-timeout", "150")) {
            List<Long> pids = awaitWorkerPids(launch, 2);
            launch.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: no shutdown hook runs
            assertNoneAlive(pids);
        }
    }

    private static List<Long> awaitWorkerPids(WorkerProcess launch, int n) throws InterruptedException {
        launch.awaitLine(l -> l.matches("\\[launch] .*started worker " + (n - 1) + " .*"), 60);
        List<Long> pids = new ArrayList<>();
        for (String l : launch.lines(l -> l.contains("started worker"))) {
            pids.add(Long.parseLong(l.replaceAll(".*\\(pid (\\d+)\\).*", "$1")));
        }
        assertEquals(n, pids.size());
        return pids;
    }

    /** Every pid must be gone within 15 s: no orphaned worker. */
    private static void assertNoneAlive(List<Long> pids) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (pids.stream().noneMatch(p -> ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false))) {
                return;
            }
            Thread.sleep(100);
        }
        List<Long> alive = pids.stream().filter(p -> ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false))
                .toList();
        alive.forEach(p -> ProcessHandle.of(p).ifPresent(ProcessHandle::destroyForcibly));
        throw new AssertionError("workers still alive after 15 s: " + alive);
    }

    /**
     * Each of workers 0 to {@code n - 1} ends with a summary line that matches {@code summary} (given the worker's
     * index), and all agree on the parameters' checksum.
     */
    private static void assertSummariesAgree(WorkerProcess launch, int n, IntFunction<String> summary) {
        Set<String> checksums = new java.util.HashSet<>();
        for (int w = 0; w < n; w++) {
            String prefix = "[" + w + "] ";
            List<String> own = launch.lines(l -> l.startsWith(prefix));
            String last = own.get(own.size() - 1).substring(prefix.length());
            assertTrue(last.matches(summary.apply(w)), launch.transcript());
            checksums.add(last.replaceAll(".*checksum=", ""));
        }
        assertEquals(1, checksums.size(), launch.transcript());
    }
}
