package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import dev.kolo.testing.ChildJvms;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker saving checkpoints in a loop is killed with SIGKILL at a random moment, 20 times, on the same
 * directory. After every kill, every committed checkpoint verifies, the newest loads with exactly the
 * content of its step, and the {@code latest} pointer names a committed checkpoint. Each new worker
 * resumes from what the previous one left.
 */
class CrashConsistencyTest {
    private static final int KILLS = 20;
    private static final int TENSORS = 4;
    private static final int BYTES_EACH = 2 << 20;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 100, unit = TimeUnit.SECONDS)
    void sigkillAtRandomPointsNeverLeavesAnUnloadableNewestCheckpoint() throws Exception {
        Path dir = tmp.resolve("ckpt");
        Random random = new Random(42);
        long lastStep = -1;
        int killedMidWrite = 0;
        try (ChildJvms jvms = new ChildJvms()) {
            for (int round = 0; round < KILLS; round++) {
                int p = jvms.start(CrashingSaverMain.class, List.of("-Xmx128m", "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1"), Map.of(), dir.toString(), Integer.toString(TENSORS),
                        Integer.toString(BYTES_EACH));
                String first = awaitReady(jvms, p, round);
                if (!first.startsWith("ready ")) {
                    fail("round " + round + ": worker failed at start: " + jvms.output(p));
                }
                long resumedAt = Long.parseLong(first.substring(6).trim());
                assertEquals(lastStep + 1, resumedAt, "round " + round + ": worker resumed at the wrong step");
                Thread.sleep(100 + random.nextInt(900));
                jvms.process(p).destroyForcibly(); // SIGKILL
                assertTrue(jvms.process(p).waitFor(20, TimeUnit.SECONDS), "killed worker did not exit");
                if (hasLeftovers(dir)) {
                    killedMidWrite++;
                }

                // Every committed checkpoint verifies: the commit is atomic.
                LocalDirectoryStore store = new LocalDirectoryStore(dir);
                List<CheckpointId> ids = store.list();
                for (CheckpointId id : ids) {
                    try (StoredCheckpoint sc = store.open(id)) {
                        CheckpointReader.Verified v = CheckpointReader.verify(sc);
                        assertTrue(v.ok(), "round " + round + ": committed " + id + " is corrupt: " + v.problems());
                    }
                }
                Optional<CheckpointId> latest = store.latestPointer();
                latest.ifPresent(l -> assertTrue(ids.contains(l), "latest pointer names " + l + ", not in " + ids));
                // The newest loads, with the content of its step.
                try (Checkpointer reader2 = Checkpointer.builder().directory(dir).writer(false).build()) {
                    Optional<RestoredCheckpoint> r = reader2.restoreLatest();
                    assertEquals(ids.isEmpty(), r.isEmpty());
                    if (r.isPresent()) {
                        assertEquals(ids.get(0), r.get().id());
                        assertTrue(r.get().skipped().isEmpty(), "skipped: " + r.get().skipped());
                        TestStates.assertContent(r.get().state(), TENSORS, BYTES_EACH);
                        assertTrue(r.get().id().step() >= lastStep, "went back from " + lastStep + " to " + r.get().id());
                        lastStep = r.get().id().step();
                    }
                }
            }
        }
        assertTrue(lastStep > KILLS, "workers made too little progress: newest step " + lastStep);
        // Not guaranteed, but with saves back to back nearly every kill lands in one.
        assertTrue(killedMidWrite > 0, "no kill landed during a write");
        System.out.println("crash test: " + KILLS + " kills, " + killedMidWrite + " mid-write, newest step " + lastStep);
    }

    /**
     * @return the worker's first line saying it is ready or failing, or {@code exited: output} if it exits without
     *     one
     */
    private static String awaitReady(ChildJvms jvms, int p, int round) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            boolean exited = !jvms.process(p).isAlive();
            if (exited) {
                jvms.waitExit(p, 1); // its output read to the end
            }
            for (String line : jvms.output(p)) {
                if (line.startsWith("ready ") || line.contains("Exception") || line.contains("Error")) {
                    return line;
                }
            }
            if (exited) {
                return "exited: " + jvms.output(p);
            }
            if (System.nanoTime() > deadline) {
                fail("round " + round + ": worker did not get ready in 30 s; output " + jvms.output(p));
            }
            Thread.sleep(20);
        }
    }

    private static boolean hasLeftovers(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path e : s) {
                String n = e.getFileName().toString();
                if (n.startsWith(".tmp-") || n.startsWith(".del-") || n.startsWith(".latest.tmp-")) {
                    return true;
                }
            }
        }
        return false;
    }
}
