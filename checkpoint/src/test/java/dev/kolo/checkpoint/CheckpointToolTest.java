package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CheckpointToolTest {
    @TempDir
    Path tmp;

    private Path twoCheckpoints() {
        Path dir = tmp.resolve("ckpt");
        try (Checkpointer c = Checkpointer.builder().job("mnist").directory(dir).build()) {
            c.saveSync(TestStates.state(7, 2, 4096));
            c.saveSync(TestStates.state(8, 2, 4096));
        }
        return dir;
    }

    @Test
    void lsListsStepsAndSizesNewestFirstAndMarksLatest() {
        Path dir = twoCheckpoints();
        CorruptionTest.Cli cli = CorruptionTest.Cli.ls(dir);
        assertEquals(CheckpointTool.OK, cli.code(), cli.err());
        String[] lines = cli.out().split("\n");
        assertEquals(3, lines.length, cli.out());
        assertTrue(lines[0].startsWith("STEP"), cli.out());
        assertTrue(lines[1].startsWith("8 ") && lines[1].contains("ckpt-s000000000008-g1  (latest)"), lines[1]);
        assertTrue(lines[1].contains("8.") && lines[1].contains("KiB"), lines[1]);
        assertTrue(lines[2].startsWith("7 ") && !lines[2].contains("latest"), lines[2]);
        assertEquals("", cli.err());
    }

    @Test
    void inspectPrintsTheManifestOfTheLatestOrOfOneCheckpoint() {
        Path dir = twoCheckpoints();
        CorruptionTest.Cli cli = CorruptionTest.Cli.inspect(dir);
        assertEquals(CheckpointTool.OK, cli.code(), cli.err());
        assertTrue(cli.out().contains("job          mnist"), cli.out());
        assertTrue(cli.out().contains("step         8"), cli.out());
        assertTrue(cli.out().contains("world size   4"), cli.out());
        assertTrue(cli.out().contains("metadata     {\"model\":\"test\",\"step\":8}"), cli.out());
        assertTrue(cli.out().matches("(?s).*\n  t0 +INT64 +\\[512\\] +64 +4096  [0-9a-f]{8}\n.*"), cli.out());
        assertTrue(cli.out().contains("lr"), cli.out());

        CorruptionTest.Cli one = CorruptionTest.Cli.inspect(dir.resolve("ckpt-s000000000007-g1"));
        assertEquals(CheckpointTool.OK, one.code(), one.err());
        assertTrue(one.out().contains("step         7"), one.out());
        CorruptionTest.Cli viaFile = CorruptionTest.Cli.inspect(dir.resolve("ckpt-s000000000007-g1/manifest.json"));
        assertEquals(CheckpointTool.OK, viaFile.code(), viaFile.err());
    }

    @Test
    void verifyPassesOnAHealthyDirectoryAndOnOneCheckpoint() {
        Path dir = twoCheckpoints();
        CorruptionTest.Cli cli = CorruptionTest.Cli.verify(dir);
        assertEquals(CheckpointTool.OK, cli.code(), cli.err());
        assertTrue(cli.out().contains("2 checkpoint(s): 2 ok, 0 corrupt; newest loadable: ckpt-s000000000008-g1"), cli.out());
        assertEquals("", cli.err());
        assertEquals(CheckpointTool.OK, CorruptionTest.Cli.verify(dir.resolve("ckpt-s000000000007-g1")).code());
    }

    @Test
    void userMistakesAreOneLineOnStderrWithoutStackTraces() throws Exception {
        Path missing = tmp.resolve("nope");
        for (CorruptionTest.Cli cli : new CorruptionTest.Cli[] {CorruptionTest.Cli.ls(missing),
                CorruptionTest.Cli.inspect(missing), CorruptionTest.Cli.verify(missing)}) {
            assertEquals(CheckpointTool.USAGE, cli.code());
            assertEquals("", cli.out());
            assertEquals(1, cli.err().lines().count(), cli.err());
            assertTrue(cli.err().contains("no such directory: " + missing.toAbsolutePath()), cli.err());
        }
        Path notCkpt = Files.createDirectories(tmp.resolve("src"));
        Files.writeString(notCkpt.resolve("Main.java"), "class Main {}");
        CorruptionTest.Cli cli = CorruptionTest.Cli.verify(notCkpt);
        assertEquals(CheckpointTool.USAGE, cli.code());
        assertEquals(1, cli.err().lines().count(), cli.err());
        assertTrue(cli.err().contains("not a checkpoint directory"), cli.err());
        CorruptionTest.Cli file = CorruptionTest.Cli.ls(notCkpt.resolve("Main.java"));
        assertEquals(CheckpointTool.USAGE, file.code());
        assertTrue(file.err().contains("not a directory"), file.err());

        Path empty = Files.createDirectories(tmp.resolve("empty"));
        CorruptionTest.Cli ls = CorruptionTest.Cli.ls(empty);
        assertEquals(CheckpointTool.OK, ls.code());
        assertTrue(ls.out().startsWith("no checkpoints in "), ls.out());
        CorruptionTest.Cli verify = CorruptionTest.Cli.verify(empty);
        assertEquals(CheckpointTool.CORRUPT, verify.code());
        assertTrue(verify.err().contains("no checkpoints in"), verify.err());
        assertEquals(CheckpointTool.USAGE, new CheckpointTool().run(new String[] {"frob", "x"}, System.out,
                new java.io.PrintStream(new java.io.ByteArrayOutputStream())));
    }
}
