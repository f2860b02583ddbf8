package dev.kolo.samples.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The fused step's switch reads as it is spelled. */
class BenchAllreduceOptionsTest {
    private static BenchAllreduceCommand parse(String... args) {
        BenchAllreduceCommand c = new BenchAllreduceCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void theFusedStepIsOnByDefaultAndOffWithItsNegation() {
        assertTrue(parse("-np", "2").fusedStep);
        assertTrue(parse("-np", "2", "--fused-step").fusedStep);
        assertFalse(parse("-np", "2", "--no-fused-step").fusedStep);
    }
}
