package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.launch.Launcher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code launch} with a secret of the user's own, given as {@code -Dkolo.job.secret} or in {@code
 * KOLO_JOB_SECRET_FILE}: the sample workers (whose command lines copy the launcher's JVM flags) run with that
 * secret, received on standard input, and no process but the launcher itself has it on its command line.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LaunchSecretIT {
    private static final String SECRET = "s3cret-of-the-test-" + Long.toHexString(System.nanoTime());

    @TempDir
    Path tmp;

    @Test
    void aSecretGivenAsAPropertyIsOnNoWorkerCommandLineAndIsWarnedAbout() throws Exception {
        try (WorkerProcess launch = WorkerProcess.start(List.of("-Dkolo.job.secret=" + SECRET), Map.of(),
                "launch", "-np", "2", "--", "--np", "3", "--rendezvous-timeout", "150")) {
            assertWorkersHoldTheSecretOnlyInTheirEnvironment(launch);
            assertTrue(launch.transcript().contains("-Dkolo.job.secret, which every user of this machine sees in "
                    + "'ps'"), launch.transcript());
        }
    }

    @Test
    void aSecretFileReachesTheWorkersOnStandardInputOnly() throws Exception {
        Path file = tmp.resolve("secret");
        Files.writeString(file, SECRET + "\n");
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try (WorkerProcess launch = WorkerProcess.start(List.of(), Map.of("KOLO_JOB_SECRET_FILE", file.toString()),
                "launch", "-np", "2", "--", "--np", "3", "--rendezvous-timeout", "150")) {
            assertWorkersHoldTheSecretOnlyInTheirEnvironment(launch);
            assertFalse(launch.transcript().contains("sees in 'ps'"), launch.transcript());
        }
    }

    @Test
    void aSecretFileThatIsNoSecretStopsTheLaunchNamingTheFile() throws Exception {
        Path file = tmp.resolve("short");
        Files.writeString(file, "too-short\n");
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try (WorkerProcess launch = WorkerProcess.start(List.of(), Map.of("KOLO_JOB_SECRET_FILE", file.toString()),
                "launch", "-np", "2")) {
            assertTrue(launch.exitCode(60) != 0, launch.transcript());
            assertTrue(launch.transcript().contains("KOLO_JOB_SECRET_FILE: the first line of " + file),
                    launch.transcript());
        }
    }

    /**
     * Waits (up to 60 s) for both worker JVMs below the launcher, then checks that each got the secret in its
     * environment (from standard input, through the wrapper) and that no process other than the launcher, whose
     * command line the test itself wrote, shows it on its command line.
     */
    private static void assertWorkersHoldTheSecretOnlyInTheirEnvironment(WorkerProcess launch) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<ProcessHandle> workers = List.of();
        while (workers.size() < 2) {
            assertTrue(System.nanoTime() < deadline, "two workers did not start within 60 s\n" + launch.transcript());
            assertTrue(launch.process.isAlive(), "the launch ended\n" + launch.transcript());
            workers = launch.process.descendants().filter(LaunchSecretIT::isWorkerJvm).toList();
            if (workers.size() < 2) {
                launch.process.waitFor(100, TimeUnit.MILLISECONDS); // poll: the workers have no event to wait on
            }
        }
        for (ProcessHandle w : workers) {
            assertTrue(read(w.pid(), "environ").contains("KOLO_JOB_SECRET=" + SECRET + "\0"),
                    "worker " + w.pid() + " did not get the launcher's secret\n" + launch.transcript());
        }
        List<Long> showing = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : procs) {
                long pid = Long.parseLong(p.getFileName().toString());
                if (pid != launch.process.pid() && read(pid, "cmdline").contains(SECRET)) {
                    showing.add(pid);
                }
            }
        }
        assertEquals(List.of(), showing, "processes with the secret on their command line");
    }

    /** The worker's JVM, not its wrapper (a shell whose arguments name the same command) nor its watcher. */
    private static boolean isWorkerJvm(ProcessHandle p) {
        String[] args = read(p.pid(), "cmdline").split("\0");
        return args[0].endsWith("/java") && List.of(args).contains(Launcher.WORKER_MAIN);
    }

    /** A /proc file of a process, or "" when it is gone or not readable. */
    private static String read(long pid, String file) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), file)), StandardCharsets.UTF_8);
        } catch (IOException gone) {
            return "";
        }
    }
}
