package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Saves into a real 1 MiB tmpfs: a checkpoint that does not fit fails with "No space left on device",
 * leaves nothing behind and the previous checkpoint intact; a read-only file system likewise. Needs
 * permission to mount (root here); skipped with the reason otherwise.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DiskFullTest {
    @TempDir
    Path tmp;
    Path mount;

    @BeforeEach
    void mountSmallTmpfs() throws Exception {
        mount = Files.createDirectories(tmp.resolve("small"));
        Result r = run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString());
        Assumptions.assumeTrue(r.code == 0, "cannot mount a 1 MiB tmpfs for the disk-full test (needs root or "
                + "CAP_SYS_ADMIN): " + r.output);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            Result r = run("umount", mount.toString());
            if (r.code != 0) {
                run("umount", "-l", mount.toString());
            }
        }
    }

    @Test
    void aFullDiskFailsTheSaveCleanlyAndKeepsThePreviousCheckpoint() throws Exception {
        Path dir = mount.resolve("ckpt");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            assertTrue(c.saveSync(TestStates.state(1, 2, 100 * 1024)).saved());

            // Asynchronous: the future fails and names the cause and the file.
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> c.save(TestStates.state(2, 4, 512 * 1024)).get(30, TimeUnit.SECONDS));
            CheckpointException ce = assertInstanceOf(CheckpointException.class, e.getCause());
            assertTrue(ce.getMessage().startsWith("checkpoint ckpt-s000000000002-g1 not saved to directory " + dir), ce.getMessage());
            assertTrue(ce.getMessage().contains("No space left on device"), ce.getMessage());
            assertTrue(ce.getMessage().contains("data.bin"), ce.getMessage());
            assertTrue(ce.getMessage().endsWith("earlier checkpoints are unaffected"), ce.getMessage());

            // Synchronous: the same, thrown.
            CheckpointException sync = assertThrows(CheckpointException.class,
                    () -> c.saveSync(TestStates.state(3, 4, 512 * 1024)));
            assertTrue(sync.getMessage().contains("No space left on device"), sync.getMessage());

            c.awaitSaves();
            assertNoLeftovers(dir);
            assertEquals(List.of(new CheckpointId(1, 1)), new LocalDirectoryStore(dir).list());
            assertEquals(new CheckpointId(1, 1), new LocalDirectoryStore(dir).latestPointer().orElseThrow());
            RestoredCheckpoint r = c.restoreLatest().orElseThrow();
            assertEquals(new CheckpointId(1, 1), r.id());
            TestStates.assertContent(r.state(), 2, 100 * 1024);
            assertEquals(CheckpointTool.OK, CorruptionTest.Cli.verify(dir).code());

            // Once there is room again, saving works.
            assertTrue(c.saveSync(TestStates.state(4, 2, 100 * 1024)).saved());
        }
    }

    @Test
    void aReadOnlyFileSystemFailsTheSaveAndRestoreStillWorks() throws Exception {
        Path dir = mount.resolve("ckpt");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            c.saveSync(TestStates.state(1, 1, 4096));
            Result ro = run("mount", "-o", "remount,ro", mount.toString());
            Assumptions.assumeTrue(ro.code == 0, "cannot remount read-only: " + ro.output);
            CheckpointException e = assertThrows(CheckpointException.class, () -> c.saveSync(TestStates.state(2, 1, 4096)));
            assertTrue(e.getMessage().contains("Read-only file system"), e.getMessage());
            assertEquals(new CheckpointId(1, 1), c.restoreLatest().orElseThrow().id());
        }
    }

    private static void assertNoLeftovers(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<String> names = s.map(p -> p.getFileName().toString()).sorted().toList();
            for (String n : names) {
                assertFalse(n.startsWith("."), "leftover " + n + " in " + names);
            }
        }
    }

    private record Result(int code, String output) {
    }

    private static Result run(String... cmd) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Result(-1, e.getMessage());
        }
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, String.join(" ", cmd) + " timed out");
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
    }
}
