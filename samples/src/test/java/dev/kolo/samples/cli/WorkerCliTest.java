package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.samples.launch.Launcher;
import org.junit.jupiter.api.Test;

/** The command line's exit codes, in process (the jar's own runs are the ITs of dev.kolo.samples). */
class WorkerCliTest {
    @Test
    void unknownScenarioIsOneLineAndNonZeroExit() {
        assertEquals(78, WorkerCli.run("bench", "chaos", "--scenarios", "nope"));
    }

    @Test
    void theLauncherStartsWorkersWithThisEntryPoint() {
        assertEquals(WorkerCli.class.getName(), Launcher.WORKER_MAIN);
    }

    @Test
    void anElasticBenchOfTwoWorkersIsRefusedUpFront() {
        // Killing one of two leaves no strict majority: the job could never recover, so refuse before starting.
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream saved = System.err;
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertEquals(78, WorkerCli.run("bench", "elastic", "-np", "2"));
        } finally {
            System.setErr(saved);
        }
        String message = err.toString(java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertTrue(message.contains("-np must be at least 3 (got 2)"), message);
    }

    @Test
    void benchCheckpointRunsTheCheckpointBenchmark(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.PrintStream saved = System.out;
        System.setOut(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertEquals(0, WorkerCli.run("bench", "checkpoint", dir.toString(), "--bytes", "1048576", "--reps", "1",
                    "--json"));
        } finally {
            System.setOut(saved);
        }
        String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertTrue(text.contains("{\"bench\":\"checkpoint\",\"ratio\":\"write_vs_plain\""),
                text);
    }

    @Test
    void everySettingFlagRefusesEdgeValuesInOneLineBeforeJoining() {
        String[][] cases = {
            {"--np", "0", "--np must be a whole number from 1 to 4096 (got '0')"},
            {"--np", "4097", "--np must be a whole number from 1 to 4096 (got '4097')"},
            {"--cycle-time", "NaN", "--cycle-time must be a number of milliseconds from 0 to 1000 (got 'NaN')"},
            {"--cycle-time", "1e99", "--cycle-time must be a number of milliseconds from 0 to 1000 (got '1e99')"},
            {"--rendezvous-timeout", "99999999999", "--rendezvous-timeout must be a number of seconds from 0.001 to "
                + "2592000 (30 days) (got '99999999999')"},
            {"--op-timeout", "Infinity", "--op-timeout must be a number of seconds from 0.001 to 2592000 (30 days) "
                + "(got 'Infinity')"},
            {"--metrics-port", "-1", "--metrics-port must be a port from 0 to 65535 (got '-1')"},
            {"--cache-capacity", "garbage", "--cache-capacity must be a whole number from 0 (off) to 16777216 "
                + "(got 'garbage')"},
            {"--kernels", "foo", "--kernels must be one of auto, native, java (got 'foo')"},
        };
        for (String[] c : cases) {
            String err = stderrOf(() -> assertEquals(78, WorkerCli.run(c[0], c[1]), c[0] + " " + c[1]));
            assertEquals("kolo: error: " + c[2] + "\n", err);
            org.junit.jupiter.api.Assertions.assertNull(System.getProperty("kolo.np"), "a refused flag sets nothing");
        }
        org.junit.jupiter.api.Assertions.assertTrue(com.hazelcast.core.Hazelcast.getAllHazelcastInstances().isEmpty());
    }

    @Test
    void helpListsEverySettingFlagWithItsVariableAndDefault() {
        java.io.StringWriter help = new java.io.StringWriter();
        WorkerCli.commandLine().usage(new java.io.PrintWriter(help));
        for (dev.kolo.runtime.Setting<?> s : dev.kolo.runtime.Settings.all()) {
            s.flag().ifPresent(f -> org.junit.jupiter.api.Assertions.assertTrue(help.toString().contains(f), f));
        }
        org.junit.jupiter.api.Assertions.assertTrue(help.toString().contains("(KOLO_CYCLE_TIME; default: 1 ms)"),
                help.toString());
        org.junit.jupiter.api.Assertions.assertFalse(help.toString().contains("--job-secret"));
    }

    @Test
    void aMetricsPortThatRunsOutForTheLastWorkerIsRefusedBeforeAnyStarts() {
        System.setProperty("kolo.metrics.port", "65534");
        String err;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.PrintStream saved = System.out;
        System.setOut(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            err = stderrOf(() -> assertEquals(78, WorkerCli.run("launch", "-np", "3")));
        } finally {
            System.setOut(saved);
            System.clearProperty("kolo.metrics.port");
        }
        assertEquals("kolo: error: KOLO_METRICS_PORT 65534 leaves no port for worker 2 of a host (launch gives a host's "
                + "worker i the port 65534 + i): use at most 65533, or 0 to turn the metrics endpoints off\n", err);
        org.junit.jupiter.api.Assertions.assertFalse(out.toString(java.nio.charset.StandardCharsets.UTF_8)
                .contains("started worker"), "no worker was started");
    }

    private static String stderrOf(Runnable r) {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream saved = System.err;
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setErr(saved);
        }
        return err.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
