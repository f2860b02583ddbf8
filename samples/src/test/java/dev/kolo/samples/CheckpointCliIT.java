package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.runtime.Tensor;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code worker.jar checkpoint ls|inspect|verify} on real checkpoint files, intact and corrupted. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CheckpointCliIT {

    @Test
    void listsInspectsAndDetectsCorruption(@TempDir Path dir) throws Exception {
        try (Checkpointer c = Checkpointer.builder().job("cli").directory(dir).writer(true).build()) {
            for (long step = 100; step <= 200; step += 100) {
                c.saveSync(CheckpointState.builder(step).epoch(1)
                        .tensor("w", Tensor.of(new float[] {1, 2, 3, (float) step}, 4)).build());
            }
        }
        try (WorkerProcess ls = WorkerProcess.start("checkpoint", "ls", dir.toString())) {
            assertEquals(0, ls.exitCode(60), ls.transcript());
            assertTrue(String.join("\n", ls.out).contains("200"), ls.transcript());
        }
        try (WorkerProcess inspect = WorkerProcess.start("checkpoint", "inspect", dir.toString())) {
            assertEquals(0, inspect.exitCode(60), inspect.transcript());
            assertTrue(inspect.out.stream().anyMatch(l -> l.trim().matches("w\\s+FLOAT32\\s+\\[4].*")), inspect.transcript());
        }
        try (WorkerProcess verify = WorkerProcess.start("checkpoint", "verify", dir.toString())) {
            assertEquals(0, verify.exitCode(60), verify.transcript());
        }
        Path data;
        try (Stream<Path> files = Files.walk(dir)) {
            // Match below dir only: the temporary directory's own name may contain "200" too.
            data = files.filter(p -> dir.relativize(p).toString().contains("200") && Files.isRegularFile(p)
                    && !p.getFileName().toString().endsWith(".json")).findFirst().orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(data.toFile(), "rw")) {
            f.seek(f.length() - 1);
            int b = f.read();
            f.seek(f.length() - 1);
            f.write(b ^ 0x01); // flip one bit of the last tensor byte
        }
        try (WorkerProcess verify = WorkerProcess.start("checkpoint", "verify", dir.toString())) {
            assertNotEquals(0, verify.exitCode(60), verify.transcript());
            assertTrue(verify.transcript().contains("w"), verify.transcript());
        }
        try (WorkerProcess missing = WorkerProcess.start("checkpoint", "verify", dir.resolve("nope").toString())) {
            assertNotEquals(0, missing.exitCode(60));
            assertEquals(1, missing.err.stream().filter(l -> !l.isBlank()).count(), missing.transcript());
        }
    }
}
