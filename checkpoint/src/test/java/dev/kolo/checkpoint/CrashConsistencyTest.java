package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
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
        for (int round = 0; round < KILLS; round++) {
            Process p = start(dir);
            List<String> lines = new ArrayList<>();
            CompletableFuture<String> ready = new CompletableFuture<>();
            Thread reader = new Thread(() -> drain(p, lines, ready), "crash-child-reader");
            reader.setDaemon(true);
            reader.start();
            String first;
            try {
                first = ready.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
                fail("round " + round + ": worker did not get ready: " + e + "; output " + lines);
                return;
            }
            if (!first.startsWith("ready ")) {
                p.destroyForcibly();
                fail("round " + round + ": worker failed at start: " + lines);
            }
            long resumedAt = Long.parseLong(first.substring(6).trim());
            assertEquals(lastStep + 1, resumedAt, "round " + round + ": worker resumed at the wrong step");
            Thread.sleep(100 + random.nextInt(900));
            p.destroyForcibly(); // SIGKILL
            assertTrue(p.waitFor(20, TimeUnit.SECONDS), "killed worker did not exit");
            reader.join(5_000);
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
        assertTrue(lastStep > KILLS, "workers made too little progress: newest step " + lastStep);
        // Not guaranteed, but with saves back to back nearly every kill lands in one.
        assertTrue(killedMidWrite > 0, "no kill landed during a write");
        System.out.println("crash test: " + KILLS + " kills, " + killedMidWrite + " mid-write, newest step " + lastStep);
    }

    private static Process start(Path dir) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), CrashingSaverMain.class.getName(), dir.toString(),
                Integer.toString(TENSORS), Integer.toString(BYTES_EACH)));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    private static void drain(Process p, List<String> lines, CompletableFuture<String> ready) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (lines) {
                    if (lines.size() < 200) {
                        lines.add(line);
                    }
                }
                if (line.startsWith("ready ") || line.contains("Exception") || line.contains("Error")) {
                    ready.complete(line);
                }
            }
        } catch (IOException e) {
            // the process was killed
        } finally {
            ready.complete("exited: " + lines);
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
