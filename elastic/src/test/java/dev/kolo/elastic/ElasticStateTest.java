package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ElasticState on real workers in one JVM: commit/restore, checkpoint hand-off and resume, sync. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ElasticStateTest {
    @Test
    void commitRestoreAndCheckpointResume() throws Exception {
        Path dir = Files.createTempDirectory("ew-state");
        try (InProcessJob job = new InProcessJob(1, b -> b)) {
            Kolo kolo = job.workers.get(0);
            float[] w = {1, 2, 3, 4};
            long[] counts = {7};
            ByteBuffer buf = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(0, 1.5);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).checkpointEvery(2).build()) {
                s.floats("w", w, 2, 2).longs("counts", counts).buffer("d", DType.FLOAT64, buf)
                        .value("epoch", 0L).value("lr", 0.5).value("tag", "a");
                assertThrows(IllegalArgumentException.class, () -> s.floats("w", new float[1]));
                assertThrows(IllegalArgumentException.class, () -> s.floats("bad", new float[3], 2, 2));
                s.commit();
                w[0] = 100;
                counts[0] = 8;
                buf.putDouble(0, -1);
                s.set("epoch", 5L);
                s.set("tag", "b");
                assertThrows(IllegalArgumentException.class, () -> s.set("epoch", 1.0));
                s.restore();
                assertArrayEquals(new float[] {1, 2, 3, 4}, w);
                assertEquals(7, counts[0]);
                assertEquals(1.5, buf.getDouble(0));
                assertEquals(0L, s.longValue("epoch"));
                assertEquals("a", s.stringValue("tag"));
                assertThrows(IllegalStateException.class, () -> s.value("late", 1L), "registration after a commit");
                w[1] = 20;
                s.set("epoch", 2L);
                s.commit(); // the second commit goes to the checkpoint store
                s.awaitCheckpoints();
                assertEquals(1, s.checkpointsSaved());
                w[1] = 99;
                s.commit();
                s.awaitCheckpoints();
                assertEquals(1, s.checkpointsSaved(), "only every 2nd commit is checkpointed");
            }
            float[] w2 = new float[4];
            long[] c2 = new long[1];
            ByteBuffer b2 = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).build()) {
                s.floats("w", w2, 2, 2).longs("counts", c2).buffer("d", DType.FLOAT64, b2)
                        .value("epoch", 0L).value("lr", 0.0).value("tag", "");
                Optional<CheckpointId> id = s.restoreLatest();
                assertEquals(2, id.orElseThrow().step());
                assertEquals(kolo.generation(), id.get().generation(), "manifests carry the writer's generation");
                assertArrayEquals(new float[] {1, 20, 3, 4}, w2);
                assertEquals(2L, s.longValue("epoch"));
                assertEquals(0.5, s.doubleValue("lr"));
                assertEquals(1.5, b2.getDouble(0));
                assertEquals(2, s.commits());
            }
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).build()) {
                s.floats("w", new float[5]).value("epoch", 0L);
                IllegalStateException e = assertThrows(IllegalStateException.class, s::restoreLatest);
                assertTrue(e.getMessage().contains("'w'"), e.getMessage());
            }
        }
    }

    /**
     * A job shorter than the checkpoint interval (the default MNIST epoch is 468 steps against 500) still ends
     * with its final state in the store; a job that ends right after a restore writes nothing new.
     */
    @Test
    void theFinalCommitIsWrittenEvenWhenNoCheckpointWasDue() throws Exception {
        Path dir = Files.createTempDirectory("ew-final");
        try (InProcessJob job = new InProcessJob(1, b -> b)) {
            Kolo kolo = job.workers.get(0);
            ByteBuffer w = ByteBuffer.allocateDirect(1024).order(ByteOrder.LITTLE_ENDIAN);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).checkpointEvery(50).build()) {
                s.buffer("w", DType.FLOAT32, w).value("epoch", 0L);
                for (int i = 1; i <= 3; i++) {
                    w.putFloat(0, i);
                    s.commit();
                }
                s.awaitCheckpoints();
                assertEquals(0, s.checkpointsSaved(), "precondition: no commit was due");
                s.finishCheckpoints();
                assertEquals(1, s.checkpointsSaved(), "the final commit is written");
            }
            ByteBuffer back = ByteBuffer.allocateDirect(1024).order(ByteOrder.LITTLE_ENDIAN);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).checkpointEvery(50).build()) {
                s.buffer("w", DType.FLOAT32, back).value("epoch", 0L);
                assertEquals(3, s.restoreLatest().orElseThrow().step());
                assertEquals(3f, back.getFloat(0));
                s.finishCheckpoints();
                assertEquals(0, s.checkpointsSaved(), "the store already holds the restored commit");
            }
        }
    }

    /**
     * Saves never block a step, so a commit due for the store while the previous save is still being written
     * is skipped; at the end of training {@code finishCheckpoints} writes that last one, or a restarted job
     * would resume from an older checkpoint than the last it was due.
     */
    @Test
    void lastDueCheckpointIsWrittenAtTheEndEvenIfSkipped() throws Exception {
        Path dir = Files.createTempDirectory("ew-finish");
        try (InProcessJob job = new InProcessJob(1, b -> b)) {
            Kolo kolo = job.workers.get(0);
            ByteBuffer big = ByteBuffer.allocateDirect(64 << 20).order(ByteOrder.LITTLE_ENDIAN);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).checkpointEvery(1).build()) {
                s.buffer("big", DType.FLOAT32, big).value("epoch", 0L);
                for (int i = 1; i <= 4; i++) {
                    big.putFloat(0, i);
                    s.commit(); // each is due; 64 MiB take longer to write and sync than to snapshot
                }
                s.awaitCheckpoints();
                long saved = s.checkpointsSaved();
                assertTrue(saved < 4, "precondition: a save was still running at a later commit");
                s.finishCheckpoints();
                assertEquals(saved + 1, s.checkpointsSaved(), "the skipped last commit is written");
                s.finishCheckpoints();
                assertEquals(saved + 1, s.checkpointsSaved(), "and only once");
            }
            ByteBuffer back = ByteBuffer.allocateDirect(64 << 20).order(ByteOrder.LITTLE_ENDIAN);
            try (ElasticState s = ElasticState.builder(kolo).checkpointDirectory(dir).build()) {
                s.buffer("big", DType.FLOAT32, back).value("epoch", 0L);
                assertEquals(4, s.restoreLatest().orElseThrow().step());
                assertEquals(4f, back.getFloat(0));
            }
        }
    }

    @Test
    void syncGivesEveryRankRankZerosStateAndRejectsDifferentLayouts() throws Exception {
        try (InProcessJob job = new InProcessJob(3, b -> b)) {
            List<float[]> got = job.onAll(k -> {
                float[] w = {k.rank(), k.rank() * 10, 7};
                ElasticState s = ElasticState.builder(k).build();
                s.floats("w", w).value("r", (long) k.rank());
                s.sync();
                assertEquals(0L, s.longValue("r"));
                return w;
            });
            for (float[] w : got) {
                assertArrayEquals(new float[] {0, 0, 7}, w);
            }
            // A rank with newer committed state wins over rank 0's.
            List<float[]> newer = job.onAll(k -> {
                float[] w = {k.rank()};
                ElasticState s = ElasticState.builder(k).build();
                s.floats("w", w);
                s.sync();
                w[0] = 5 + k.rank();
                s.commit();
                if (k.rank() == 2) {
                    w[0] = 42;
                    s.commit(); // alone: only rank 2 holds commit 2 (a collective-free commit in a fixed job)
                }
                s.restore();
                s.sync();
                return w;
            });
            for (float[] w : newer) {
                assertEquals(42f, w[0]);
            }
            List<String> errors = job.onAll(k -> {
                ElasticState s = ElasticState.builder(k).build();
                s.floats("w", new float[k.rank() == 1 ? 3 : 2]);
                try {
                    s.sync();
                    return "no error";
                } catch (IllegalStateException e) {
                    return e.getMessage();
                }
            });
            for (String e : errors) {
                assertTrue(e.contains("ranks [1]") && e.contains("different elastic state"), e);
            }
        }
    }
}
