package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The chaos suite's argument, report and log-checking logic, without processes (the suite itself is not a test). */
class BenchChaosCommandTest {
    @Test
    void selectsNamedScenariosInOrderAndRejectsUnknownOnes() {
        assertEquals(List.of("crash-loop", "sigterm-leave"), BenchChaosCommand.select(List.of("crash-loop",
                " sigterm-leave"), 1).stream().map(ChaosScenarios.Entry::name).toList());
        assertEquals(ChaosScenarios.ALL.size(), BenchChaosCommand.select(null, 20).size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BenchChaosCommand.select(List.of("nope"), 1));
        assertTrue(e.getMessage().contains("unknown scenario 'nope'") && e.getMessage().contains("crash-loop"));
        assertThrows(IllegalArgumentException.class, () -> BenchChaosCommand.select(null, 0));
    }

    @Test
    void unknownScenarioIsOneLineAndNonZeroExit() {
        assertEquals(1, WorkerCli.run("bench", "chaos", "--scenarios", "nope"));
    }

    @Test
    void reportRowsAndJsonLines() {
        ChaosReport report = new ChaosReport();
        report.add(new ChaosReport.Result("sigterm-leave", true, 12.34, "ok"));
        report.add(new ChaosReport.Result("crash-loop", false, 3, "w1 exited 3: \"x\"\nmore"));
        assertFalse(report.allPassed());
        assertEquals("| crash-loop               | FAIL   |     3.0 | w1 exited 3: \"x\" / more",
                ChaosReport.row(report.results().get(1)));
        assertEquals("{\"bench\":\"chaos\",\"scenario\":\"crash-loop\",\"result\":\"fail\",\"seconds\":3.0,"
                + "\"detail\":\"w1 exited 3: \\\"x\\\" / more\"}", ChaosReport.json(report.results().get(1)));
        assertTrue(report.summary().endsWith("1 of 2 scenarios passed; failed: crash-loop"), report.summary());
    }

    @Test
    void logCheckCatchesDifferentChecksumsLostCommitsAndDoneMismatch() throws Exception {
        ChaosLog ok = new ChaosLog()
                .add("w0", List.of("kolo: step=5 epoch=1 size=2 gen=1 checksum=aa",
                        "kolo: reset reason=worker_lost size=1 gen=2 previous_size=2 rank=0 step=5",
                        "kolo: done rank=0 size=1 epochs=1 test_accuracy=0.5000 checksum=cc"))
                .add("w1", List.of("kolo: step=5 epoch=1 size=2 gen=1 checksum=aa",
                        "kolo: done rank=1 size=1 epochs=1 test_accuracy=0.5000 checksum=cc"));
        assertEquals(1, ok.checkConsistent());
        assertEquals("cc", ok.checkDone(2));
        assertEquals(List.of("w0: worker_lost"), ok.resets());

        ChaosLog differ = new ChaosLog()
                .add("w0", List.of("kolo: step=5 epoch=1 size=2 gen=1 checksum=aa"))
                .add("w1", List.of("kolo: step=5 epoch=1 size=2 gen=1 checksum=ab"));
        assertTrue(assertThrows(ChaosFailure.class, differ::checkConsistent).getMessage()
                .startsWith("checksums differ at step 5 gen 1"));

        ChaosLog lost = new ChaosLog().add("w0", List.of("kolo: step=10 epoch=1 size=2 gen=1 checksum=aa",
                "kolo: reset reason=worker_lost size=1 gen=2 previous_size=2 rank=0 step=5"));
        assertTrue(assertThrows(ChaosFailure.class, lost::checkConsistent).getMessage().contains("lost a commit"));

        ChaosLog done = new ChaosLog()
                .add("w0", List.of("kolo: done rank=0 size=2 epochs=1 test_accuracy=0.5000 checksum=cc"))
                .add("w1", List.of("kolo: done rank=1 size=2 epochs=1 test_accuracy=0.5000 checksum=cd"));
        assertTrue(assertThrows(ChaosFailure.class, () -> done.checkDone(2)).getMessage().startsWith("done checksums differ"));
        assertThrows(ChaosFailure.class, () -> done.checkDone(3));
    }
}
