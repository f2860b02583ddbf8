package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CheckpointerTest {
    @TempDir
    Path tmp;

    @Test
    void everyDtypeShapeAndScalarRoundTrips() throws Exception {
        CheckpointState s = CheckpointState.builder(5).epoch(2).generation(3).worldSize(6)
                .tensor("f32", Tensor.of(new float[] {1.5f, -2f, Float.NaN, 4f}, 2, 2))
                .tensor("f64", Tensor.of(new double[] {Math.PI}))
                .tensor("f16", Tensor.of(DType.FLOAT16, new float[] {0.5f, 1f, 2f}, 3))
                .tensor("bf16", Tensor.of(DType.BFLOAT16, new float[] {3f, 4f}, 1, 2))
                .tensor("i8", Tensor.of(new byte[] {-1, 2, 3}, 3))
                .tensor("u8", Tensor.wrap(DType.UINT8, ByteBuffer.allocateDirect(5).put(new byte[] {9, 8, 7, 6, (byte) 255}).flip(), 5))
                .tensor("i32", Tensor.of(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE}, 3, 1))
                .tensor("i64", Tensor.of(new long[] {Long.MIN_VALUE, Long.MAX_VALUE}, 2))
                .tensor("empty", Tensor.allocate(DType.FLOAT32, 3, 0))
                .scalar("lr", 0.1).scalar("seed", 7L).scalar("opt", "sgd")
                .metadataJson("{\"k\":[1,2]}").build();
        for (boolean copy : new boolean[] {false, true}) {
            Path dir = tmp.resolve("rt-" + copy);
            try (Checkpointer c = Checkpointer.builder().job("rt").directory(dir).copyOnRestore(copy).build()) {
                SaveResult r = c.saveSync(s);
                assertTrue(r.saved());
                assertEquals(List.of("directory " + dir.toAbsolutePath()), r.stores());
                RestoredCheckpoint back = c.restoreLatest().orElseThrow();
                assertEquals("rt", back.job());
                assertEquals(new CheckpointId(5, 3), back.id());
                CheckpointState b = back.state();
                assertEquals(2, b.epoch());
                assertEquals(6, b.worldSize());
                assertEquals(0.1, b.doubleValue("lr"));
                assertEquals(7L, b.longValue("seed"));
                assertEquals("sgd", b.stringValue("opt"));
                assertEquals("{\"k\":[1,2]}", b.metadataJson());
                assertEquals(List.copyOf(s.tensors().keySet()), List.copyOf(b.tensors().keySet()));
                for (String name : s.tensors().keySet()) {
                    Tensor x = s.tensor(name);
                    Tensor y = b.tensor(name);
                    assertEquals(x.dtype(), y.dtype(), name);
                    assertArrayEquals(x.shape(), y.shape(), name);
                    assertArrayEquals(x.toByteArray(), y.toByteArray(), name);
                }
                // Mapped (default) tensors are read-only views of the file.
                assertTrue(b.tensor("f32").buffer().isReadOnly());
                assertThrows(ReadOnlyBufferException.class, () -> b.tensor("f32").buffer().put(0, (byte) 1));
            }
        }
    }

    @Test
    void asyncSaveSnapshotsSoTrainingCanOverwriteTensorsAtOnce() throws Exception {
        Path dir = tmp.resolve("async");
        List<ByteBuffer> buffers = TestStates.buffers(3, 1 << 20);
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            CompletableFuture<SaveResult> f = c.save(TestStates.state(10, buffers));
            for (int i = 0; i < buffers.size(); i++) {
                TestStates.fill(buffers.get(i), 999, i); // training goes on
            }
            SaveResult r = f.get(30, TimeUnit.SECONDS);
            assertTrue(r.saved());
            assertTrue(r.blocking().compareTo(r.total()) <= 0);
            long staged = c.stagingBytes();
            assertTrue(staged >= 3 << 20, "staging " + staged);
            TestStates.assertContent(c.restoreLatest().orElseThrow().state(), 3, 1 << 20);
            // The staging buffer is reused, not reallocated, for a state of the same size.
            c.save(TestStates.state(11, buffers)).get(30, TimeUnit.SECONDS);
            assertEquals(staged, c.stagingBytes());
            TestStates.assertContent(c.restoreLatest().orElseThrow().state(), 3, 1 << 20);
        }
    }

    @Test
    void inFlightPolicySkipReturnsAtOnceAndWaitWaits() throws Exception {
        GatedStore gated = new GatedStore(new LocalDirectoryStore(tmp.resolve("gated")));
        try (Checkpointer skip = Checkpointer.builder().store(gated).inFlightPolicy(InFlightPolicy.SKIP).build()) {
            CompletableFuture<SaveResult> first = skip.save(TestStates.state(1, 1, 4096));
            assertTrue(gated.entered.await(10, TimeUnit.SECONDS));
            SaveResult second = skip.save(TestStates.state(2, 1, 4096)).get(1, TimeUnit.SECONDS);
            assertEquals(SaveResult.Status.SKIPPED_IN_FLIGHT, second.status());
            assertFalse(second.saved());
            gated.release.countDown();
            assertTrue(first.get(10, TimeUnit.SECONDS).saved());
            assertEquals(List.of(new CheckpointId(1, 1)), skip.list());
        }
        GatedStore gated2 = new GatedStore(new LocalDirectoryStore(tmp.resolve("gated2")));
        try (Checkpointer wait = Checkpointer.builder().store(gated2).inFlightPolicy(InFlightPolicy.WAIT)
                .saveTimeout(Duration.ofSeconds(1)).build()) {
            CompletableFuture<SaveResult> first = wait.save(TestStates.state(1, 1, 4096));
            assertTrue(gated2.entered.await(10, TimeUnit.SECONDS));
            // Still blocked after the save timeout: a clear error, not a hang.
            CheckpointException e = assertThrows(CheckpointException.class, () -> wait.save(TestStates.state(2, 1, 4096)));
            assertTrue(e.getMessage().contains("still being written after PT1S"), e.getMessage());
            gated2.release.countDown();
            assertTrue(first.get(10, TimeUnit.SECONDS).saved());
            assertTrue(wait.save(TestStates.state(3, 1, 4096)).get(10, TimeUnit.SECONDS).saved());
            assertEquals(List.of(new CheckpointId(3, 1), new CheckpointId(1, 1)), wait.list());
        }
    }

    @Test
    void onlyTheWriterWrites() throws Exception {
        Path dir = tmp.resolve("writer");
        try (Checkpointer rank1 = Checkpointer.builder().directory(dir).rank(1).build()) {
            assertFalse(rank1.writer());
            assertEquals(SaveResult.Status.SKIPPED_NOT_WRITER, rank1.save(TestStates.state(1, 1, 64)).get().status());
            assertEquals(SaveResult.Status.SKIPPED_NOT_WRITER, rank1.saveSync(TestStates.state(1, 1, 64)).status());
            assertFalse(Files.exists(dir));
            try (Checkpointer rank0 = Checkpointer.builder().directory(dir).rank(0).build()) {
                rank0.saveSync(TestStates.state(4, 1, 64));
            }
            // Non-writers restore like everyone else.
            assertEquals(new CheckpointId(4, 1), rank1.restoreLatest().orElseThrow().id());
        }
    }

    @Test
    void retentionKeepsTheNewestKAndTheLatestPointerFollows() throws Exception {
        Path dir = tmp.resolve("retention");
        try (Checkpointer c = Checkpointer.builder().directory(dir).keep(3).build()) {
            for (long step = 1; step <= 6; step++) {
                c.save(TestStates.state(step, 2, 1024)).get(10, TimeUnit.SECONDS);
            }
            c.awaitSaves();
            LocalDirectoryStore store = new LocalDirectoryStore(dir);
            assertEquals(List.of(new CheckpointId(6, 1), new CheckpointId(5, 1), new CheckpointId(4, 1)), store.list());
            assertEquals(new CheckpointId(6, 1), store.latestPointer().orElseThrow());
            assertEquals("ckpt-s000000000006-g1\n", Files.readString(dir.resolve("latest")));
            try (var entries = Files.list(dir)) {
                assertEquals(4, entries.count(), "3 checkpoints and the latest pointer, no leftovers");
            }
        }
    }

    @Test
    void savingAnExistingIdReplacesIt() throws Exception {
        Path dir = tmp.resolve("replace");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            c.saveSync(TestStates.state(3, 1, 1024));
            CheckpointState other = CheckpointState.builder(3).generation(1).tensor("x", Tensor.of(new float[] {42f}, 1))
                    .build();
            c.saveSync(other);
            RestoredCheckpoint r = c.restoreLatest().orElseThrow();
            assertEquals(List.of("x"), List.copyOf(r.state().tensors().keySet()));
            assertEquals(1, new LocalDirectoryStore(dir).list().size());
        }
    }

    @Test
    void theWriterRemovesLeftoversOfAnInterruptedWriteAndReadersIgnoreThem() throws Exception {
        Path dir = tmp.resolve("leftovers");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            c.saveSync(TestStates.state(1, 1, 1024));
        }
        Path half = Files.createDirectories(dir.resolve(".tmp-ckpt-s000000000002-g1-deadbeef"));
        Files.write(half.resolve("data.bin"), new byte[100]);
        Files.write(dir.resolve(".latest.tmp-1234"), new byte[3]);
        try (Checkpointer reader = Checkpointer.builder().directory(dir).writer(false).build()) {
            assertEquals(new CheckpointId(1, 1), reader.restoreLatest().orElseThrow().id());
            assertTrue(Files.exists(half), "a non-writer must not touch the directory");
        }
        try (Checkpointer writer = Checkpointer.builder().directory(dir).build()) {
            assertFalse(Files.exists(half));
            assertFalse(Files.exists(dir.resolve(".latest.tmp-1234")));
            assertEquals(new CheckpointId(1, 1), writer.restoreLatest().orElseThrow().id());
        }
    }

    @Test
    void restoreHonoursAFilterAndAnEmptyDirectoryRestoresNothing() throws Exception {
        Path dir = tmp.resolve("filter");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            assertTrue(c.restoreLatest().isEmpty());
            c.saveSync(CheckpointState.builder(10).generation(1).build());
            c.saveSync(CheckpointState.builder(12).generation(5).build()); // e.g. a fenced writer's
            assertEquals(new CheckpointId(12, 5), c.restoreLatest().orElseThrow().id());
            assertEquals(new CheckpointId(10, 1), c.restoreLatest(id -> id.generation() <= 1).orElseThrow().id());
            assertEquals(new CheckpointId(10, 1), c.restore(new CheckpointId(10, 1)).id());
            assertThrows(CheckpointException.class, () -> c.restore(new CheckpointId(11, 1)));
        }
    }

    @Test
    void aClosedCheckpointerRefusesToSave() {
        Checkpointer c = Checkpointer.builder().directory(tmp.resolve("closed")).build();
        c.close();
        c.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> c.save(TestStates.state(1, 1, 64)));
        assertThrows(IllegalStateException.class, () -> c.saveSync(TestStates.state(1, 1, 64)));
    }

    @Test
    void stateValidatesInput() {
        assertThrows(IllegalArgumentException.class, () -> CheckpointState.builder(-1));
        assertThrows(IllegalArgumentException.class, () -> CheckpointState.builder(1).metadataJson("{bad"));
        assertThrows(IllegalArgumentException.class,
                () -> CheckpointState.builder(1).tensor("a", Tensor.of(new float[] {1})).tensor("a", Tensor.of(new float[] {1})));
        CheckpointState s = CheckpointState.builder(1).scalar("x", 1L).build();
        assertThrows(IllegalArgumentException.class, () -> s.doubleValue("x"));
        assertThrows(IllegalArgumentException.class, () -> s.tensor("missing"));
        assertEquals("ckpt-s000000000012-g3", new CheckpointId(12, 3).name());
        assertEquals(new CheckpointId(12, 3), CheckpointId.parse("ckpt-s000000000012-g3").orElseThrow());
        assertTrue(CheckpointId.parse("ckpt-s12-g3").isEmpty());
        if (Checkpointer.Builder.defaultDirectory().isEmpty()) {
            assertThrows(IllegalStateException.class, () -> Checkpointer.builder().build());
        }
    }

    /** A directory store whose commit waits for a latch: keeps a save in flight as long as a test wants. */
    static final class GatedStore implements CheckpointStore {
        final LocalDirectoryStore inner;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        GatedStore(LocalDirectoryStore inner) {
            this.inner = inner;
        }

        @Override
        public String describe() {
            return "gated " + inner.describe();
        }

        @Override
        public void commit(CheckpointImage image) throws IOException {
            entered.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("gate never opened");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            inner.commit(image);
        }

        @Override
        public List<CheckpointId> list() throws IOException {
            return inner.list();
        }

        @Override
        public StoredCheckpoint open(CheckpointId id) throws IOException {
            return inner.open(id);
        }

        @Override
        public void delete(CheckpointId id) throws IOException {
            inner.delete(id);
        }
    }
}
