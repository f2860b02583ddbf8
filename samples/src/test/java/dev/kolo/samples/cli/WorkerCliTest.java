package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.samples.launch.LocalLauncher;
import org.junit.jupiter.api.Test;

/** The command line's exit codes, in process (the jar's own runs are the ITs of dev.kolo.samples). */
class WorkerCliTest {
    @Test
    void unknownScenarioIsOneLineAndNonZeroExit() {
        assertEquals(1, WorkerCli.run("bench", "chaos", "--scenarios", "nope"));
    }

    @Test
    void theLauncherStartsWorkersWithThisEntryPoint() {
        assertEquals(WorkerCli.class.getName(), LocalLauncher.WORKER_MAIN);
    }

    @Test
    void anElasticBenchOfTwoWorkersIsRefusedUpFront() {
        // Killing one of two leaves no strict majority: the job could never recover, so refuse before starting.
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream saved = System.err;
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertEquals(1, WorkerCli.run("bench", "elastic", "-np", "2"));
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
}
