package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The command line's exit codes, in process (the jar's own runs are the ITs of dev.kolo.samples). */
class WorkerCliTest {
    @Test
    void unknownScenarioIsOneLineAndNonZeroExit() {
        assertEquals(1, WorkerCli.run("bench", "chaos", "--scenarios", "nope"));
    }
}
