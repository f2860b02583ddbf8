package dev.kolo.checkpoint;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Child process of {@link CrashConsistencyTest}: restores the newest checkpoint of a directory (checking
 * its content), then saves checkpoints in a loop, alternating asynchronous and synchronous saves, until
 * it is killed.
 *
 * <p>Arguments: {@code DIR TENSORS BYTES_EACH}.
 */
public final class CrashingSaverMain {
    private CrashingSaverMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int tensors = Integer.parseInt(args[1]);
        int bytesEach = Integer.parseInt(args[2]);
        try (Checkpointer ckpt = Checkpointer.builder().job("crash").directory(dir).keep(3).build()) {
            long step = ckpt.restoreLatest().map(r -> {
                TestStates.assertContent(r.state(), tensors, bytesEach);
                return r.id().step() + 1;
            }).orElse(0L);
            System.out.println("ready " + step);
            System.out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            java.util.List<java.nio.ByteBuffer> buffers = TestStates.buffers(tensors, bytesEach);
            while (System.nanoTime() < deadline) {
                CheckpointState state = TestStates.state(step, buffers);
                if (step % 2 == 0) {
                    CompletableFuture<SaveResult> f = ckpt.save(state);
                    // Training goes on: overwrite the tensors while the snapshot is written.
                    for (int i = 0; i < tensors; i++) {
                        TestStates.fill(buffers.get(i), -1, i);
                    }
                    f.get(30, TimeUnit.SECONDS);
                } else {
                    ckpt.saveSync(state);
                }
                System.out.println("saved " + step);
                step++;
            }
        }
    }
}
