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
}
