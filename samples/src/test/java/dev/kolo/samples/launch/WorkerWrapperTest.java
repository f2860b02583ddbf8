package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The remote command line survives the remote shell word for word, and the secret arrives on standard input:
 * the SSH client is replaced by {@code sh -c}, which parses the remote command as a login shell would.
 */
class WorkerWrapperTest {
    static final List<String> AWKWARD = List.of("plain", "with space", "it's", "$HOME", "a\"b", "`id`", "x;y", "");

    @Test
    void argumentsAndEnvironmentArriveUnchangedAndTheSecretOnlyOnInput() throws Exception {
        List<String> printArgs = new java.util.ArrayList<>(List.of("sh", "-c",
                "for a in \"$@\"; do printf '<%s>' \"$a\"; done; printf ' env=%s secret=%s' \"$KOLO_X\" "
                        + "\"$KOLO_JOB_SECRET\"", "printer"));
        printArgs.addAll(AWKWARD);
        List<String> cmd = WorkerWrapper.remote(List.of("fake-ssh"), "host", "/nonexistent dir", Map.of("KOLO_X",
                "v a'l"), printArgs, List.of(), 1000);
        assertEquals(List.of("fake-ssh", "host"), cmd.subList(0, 2));
        assertFalse(cmd.get(2).contains("s3cret"), "no secret on the command line");
        Process p = new ProcessBuilder("sh", "-c", cmd.get(2)).redirectErrorStream(true).start();
        // Input stays open while the worker runs, as the launcher keeps it: its end would stop the worker.
        p.getOutputStream().write("s3cret\n".getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().flush();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        p.getOutputStream().close();
        StringBuilder expected = new StringBuilder();
        AWKWARD.forEach(a -> expected.append('<').append(a).append('>'));
        assertEquals(expected + " env=v a'l secret=s3cret", out);
        assertEquals(0, p.exitValue());
    }

    /**
     * A worker that is not java itself gets Kolo's options appended to the JDK_JAVA_OPTIONS of the host it runs on
     * (here the environment of the shell standing in for the SSH server): what was there stays first, and an
     * option already there is not given twice.
     */
    @Test
    void kolosOptionsAreAppendedToTheHostsJdkJavaOptions() throws Exception {
        List<String> options = List.of("--add-opens=java.base/java.lang=ALL-UNNAMED", "-Dx.y=a");
        List<String> printer = List.of("sh", "-c", "printf '%s' \"$JDK_JAVA_OPTIONS\"");
        String kept = "-Dkept=1 --add-opens=java.base/java.lang=ALL-UNNAMED";
        assertEquals(kept + " -Dx.y=a", run(WorkerWrapper.remote(List.of("fake-ssh"), "host", "/", Map.of(),
                printer, options, 1000).get(2), kept));
        assertEquals(String.join(" ", options), run(WorkerWrapper.remote(List.of("fake-ssh"), "host", "/", Map.of(),
                printer, options, 1000).get(2), null));
        assertEquals("", run(WorkerWrapper.remote(List.of("fake-ssh"), "host", "/", Map.of(), printer, List.of(),
                1000).get(2), null), "no options: the variable is left alone");
    }

    /** Runs a remote command line in {@code sh -c} with {@code JDK_JAVA_OPTIONS} as given (null: unset). */
    private static String run(String remote, String jdkJavaOptions) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", remote).redirectErrorStream(true);
        pb.environment().remove("JDK_JAVA_OPTIONS");
        if (jdkJavaOptions != null) {
            pb.environment().put("JDK_JAVA_OPTIONS", jdkJavaOptions);
        }
        Process p = pb.start();
        p.getOutputStream().write("\n".getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().flush();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the wrapper ends with its worker");
        p.getOutputStream().close();
        return out;
    }

    /**
     * While its input is open the worker runs and the watcher waits for the input's end (its {@code cat} is seen
     * blocked in the read); once the input closes, the watcher stops the worker.
     */
    @Test
    void theWorkerIsStoppedWhenItsInputCloses() throws Exception {
        Process p = new ProcessBuilder(WorkerWrapper.local(List.of("sh", "-c", "echo ready; exec sleep 600"), List.of(),
                1000)).start();
        p.getOutputStream().write("\n".getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().flush();
        assertEquals("ready", new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8)).readLine(), "the worker started");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // a guard: the watcher blocks at once
        while (!watcherWaitsForTheInput(p)) {
            assertTrue(p.isAlive(), "the worker ended while its input was open (exit " + exitOf(p) + ")");
            assertTrue(System.nanoTime() < deadline, "the watcher never waited for the input's end");
            Thread.sleep(5); // polling a condition, bounded by the deadline
        }
        assertEquals(true, p.isAlive(), "runs while its input is open");
        p.getOutputStream().close();
        assertEquals(true, p.waitFor(10, TimeUnit.SECONDS), "stopped once its input closed");
        assertEquals(143, p.exitValue(), "by SIGTERM");
    }

    /** @return whether a {@code cat} under the worker is asleep (in the read of the launcher's end of the input) */
    private static boolean watcherWaitsForTheInput(Process worker) {
        return worker.toHandle().descendants().anyMatch(h -> h.info().command().map(c -> c.endsWith("/cat"))
                .orElse(false) && state(h.pid()) == 'S');
    }

    private static char state(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (java.io.IOException | RuntimeException gone) {
            return '?';
        }
    }

    private static String exitOf(Process p) {
        return p.isAlive() ? "none" : Integer.toString(p.exitValue());
    }

    /** A worker that ignores SIGTERM is still killed once the grace period is over: the kill check holds it ours. */
    @Test
    void aWorkerIgnoringTermIsKilledAfterTheGrace() throws Exception {
        // The worker says it is ready once its TERM trap is set, so the test closes its input only then.
        Process p = new ProcessBuilder(WorkerWrapper.local(List.of("sh", "-c",
                "trap '' TERM; echo ready; while :; do sleep 1; done"), List.of(), 1000)).start();
        p.getOutputStream().write("\n".getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().flush();
        assertEquals("ready", new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8)).readLine());
        p.getOutputStream().close();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "killed after the 1 s grace");
        assertEquals(137, p.exitValue(), "by SIGKILL");
    }

    /**
     * The check before SIGKILL: a live process reads the same start time each time; once it has exited and been
     * reaped (its pid free for another process), it reads differently, so the watcher leaves the pid alone.
     */
    @Test
    void theKillCheckTellsAnExitedProcessFromALiveOne() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "600").start();
        long pid = sleeper.pid();
        String live = started(pid);
        assertFalse(live.isBlank(), "a live process has a start time");
        assertEquals(live, started(pid), "the same process reads the same");
        sleeper.destroyForcibly();
        assertTrue(sleeper.waitFor(10, TimeUnit.SECONDS));
        assertNotEquals(live, started(pid), "an exited process no longer reads as the worker");
    }

    private static String started(long pid) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", WorkerWrapper.STARTED + "; started " + pid).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        return out;
    }
}
