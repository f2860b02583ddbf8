package dev.kolo.samples.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.netns.NetnsLab;
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
        assertEquals(List.of("partition-3-2", "slow-lossy-link"), BenchChaosCommand.select(List.of("partition-3-2",
                "slow-lossy-link"), 20).stream().map(ChaosScenarios.Entry::name).toList());
        assertEquals(List.of("kill-during-allreduce", "coordinator-killed", "sigterm-leave", "sigstop-past-deadline",
                "crash-loop", "crash-during-checkpoint", "partition-3-2", "slow-lossy-link"),
                List.copyOf(ChaosScenarios.ALL.keySet()));
    }

    @Test
    void killDuringAllreduceRunsTwentyRoundsByDefault() {
        BenchChaosCommand c = new BenchChaosCommand();
        new picocli.CommandLine(c).parseArgs("--scenarios", "kill-during-allreduce");
        assertEquals(20, c.rounds);
    }

    @Test
    void skippedScenariosNeitherPassNorFailTheSuite() {
        ChaosReport report = new ChaosReport();
        report.add(new ChaosReport.Result("sigterm-leave", true, 12.34, "ok"));
        report.add(ChaosReport.Result.skip("partition-3-2", 0.01, "network namespaces need root"));
        assertTrue(report.allPassed());
        assertEquals("| partition-3-2            | SKIP   |     0.0 | network namespaces need root",
                ChaosReport.row(report.results().get(1)));
        assertEquals("{\"bench\":\"chaos\",\"scenario\":\"partition-3-2\",\"result\":\"skip\",\"seconds\":0.0,"
                + "\"detail\":\"network namespaces need root\"}", ChaosReport.json(report.results().get(1)));
        assertEquals("bench chaos: 1 of 2 scenarios passed; skipped: partition-3-2", report.summary());
        ChaosReport onlySkipped = new ChaosReport();
        onlySkipped.add(ChaosReport.Result.skip("slow-lossy-link", 0, "no root"));
        assertTrue(onlySkipped.allPassed());
    }

    @Test
    void checkpointLineageCheck(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        for (String name : List.of("ckpt-s000000000010-g1", "ckpt-s000000000015-g1", "ckpt-s000000000020-g2",
                "ckpt-s000000000030-g4", "latest", ".tmp-x")) {
            java.nio.file.Files.createDirectory(dir.resolve(name));
        }
        try (ChaosCheckpoints ok = new ChaosCheckpoints(dir)) {
            // gen 2 trained during the split; gen 4 formed after the heal
            assertTrue(ok.checkOneLineage(1, java.util.Set.of(2L)).startsWith("4 checkpoints seen (steps 10..30, "
                    + "gens [1, 2, 4])"));
            // a generation newer than the split's but older than the heal's that the majority never trained in
            ChaosFailure foreign = assertThrows(ChaosFailure.class, () -> ok.checkOneLineage(1, java.util.Set.of(4L)));
            assertTrue(foreign.getMessage().contains("ckpt-s000000000020-g2"), foreign.getMessage());
        }
        java.nio.file.Files.createDirectory(dir.resolve("ckpt-s000000000025-g1"));
        try (ChaosCheckpoints forked = new ChaosCheckpoints(dir)) {
            ChaosFailure two = assertThrows(ChaosFailure.class, () -> forked.checkOneLineage(1, java.util.Set.of(2L)));
            assertTrue(two.getMessage().startsWith("two checkpoint lineages: ckpt-s000000000020-g2 then "
                    + "ckpt-s000000000025-g1"), two.getMessage());
        }
    }

    @Test
    void stepLinesParse() {
        assertEquals(new ChaosNetworkScenarios.Step(25, 3, 2, "0a1b"),
                ChaosNetworkScenarios.Step.parse("kolo: step=25 epoch=1 size=3 gen=2 checksum=0a1b"));
        assertEquals(null, ChaosNetworkScenarios.Step.parse("kolo: reset reason=worker_lost size=3 gen=2 "
                + "previous_size=5 rank=0 step=20"));
    }

    @Test
    void namespacesAreSkippedWithAReasonWhenUnavailable() {
        String why = NetnsLab.unavailable();
        if (why != null) {
            assertTrue(why.contains("root") || why.contains("'ip'"), why);
        }
        assertTrue(NetnsLab.onPath("sh"));
        assertFalse(NetnsLab.onPath("no-such-command-kolo"));
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
