package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.internal.format.Crc;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.ManifestCodec;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage to the newest checkpoint (a flipped tensor byte, a truncated data file, a deleted or edited
 * manifest) is detected with a clear message, and the previous checkpoint is restored; {@code verify}
 * exits non-zero.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CorruptionTest {
    private static final int TENSORS = 3;
    private static final int BYTES = 64 * 1024;

    @TempDir
    Path tmp;
    Path dir;

    @BeforeEach
    void twoCheckpoints() {
        dir = tmp.resolve("ckpt");
        try (Checkpointer c = Checkpointer.builder().directory(dir).build()) {
            c.saveSync(TestStates.state(1, TENSORS, BYTES));
            c.saveSync(TestStates.state(2, TENSORS, BYTES));
        }
    }

    private Path newest() {
        return dir.resolve(new CheckpointId(2, 1).name());
    }

    private RestoredCheckpoint restore() {
        try (Checkpointer c = Checkpointer.builder().directory(dir).writer(false).build()) {
            return c.restoreLatest().orElseThrow();
        }
    }

    @Test
    void aFlippedByteInATensorIsReportedWithTensorAndChecksumsAndThePreviousIsUsed() throws Exception {
        Path data = newest().resolve("data.bin");
        Manifest m = ManifestCodec.decode(Files.readAllBytes(newest().resolve("manifest.json")), "m");
        TensorEntry t1 = m.tensors().get(1);
        flipByte(data, t1.offset() + 1000);

        RestoredCheckpoint r = restore();
        assertEquals(new CheckpointId(1, 1), r.id());
        TestStates.assertContent(r.state(), TENSORS, BYTES);
        assertEquals(1, r.skipped().size());
        String msg = r.skipped().get(0);
        assertTrue(msg.startsWith(data.toAbsolutePath() + ": tensor 't1' (INT64 [8192], 65536 bytes at offset "
                + t1.offset() + ") checksum mismatch: CRC32C expected " + Crc.hex(t1.crc32c()) + ", actual "), msg);

        Cli cli = Cli.verify(dir);
        assertEquals(CheckpointTool.CORRUPT, cli.code);
        assertTrue(cli.out.contains("CORRUPT  ckpt-s000000000002-g1  1 of 3 tensors damaged"), cli.out);
        assertTrue(cli.out.contains("tensor 't1'"), cli.out);
        assertTrue(cli.out.contains("OK       ckpt-s000000000001-g1"), cli.out);
        assertTrue(cli.out.contains("newest loadable: ckpt-s000000000001-g1"), cli.out);
        assertEquals(1, cli.err.lines().count(), cli.err);
        assertTrue(cli.err.contains("1 of 2 checkpoint(s)"), cli.err);
    }

    @Test
    void aTruncatedDataFileIsReported() throws Exception {
        Path data = newest().resolve("data.bin");
        long size = Files.size(data);
        try (RandomAccessFile f = new RandomAccessFile(data.toFile(), "rw")) {
            f.setLength(size - 100);
        }
        RestoredCheckpoint r = restore();
        assertEquals(new CheckpointId(1, 1), r.id());
        assertEquals(List.of(data.toAbsolutePath() + ": truncated: data is " + (size - 100)
                + " bytes, the manifest expects " + size), r.skipped());
        assertEquals(CheckpointTool.CORRUPT, Cli.verify(dir).code);
    }

    @Test
    void aDeletedManifestIsReported() throws Exception {
        Path manifest = newest().resolve("manifest.json");
        Files.delete(manifest);
        RestoredCheckpoint r = restore();
        assertEquals(new CheckpointId(1, 1), r.id());
        assertEquals(List.of(manifest.toAbsolutePath() + ": manifest is missing"), r.skipped());
        Cli cli = Cli.verify(dir);
        assertEquals(CheckpointTool.CORRUPT, cli.code);
        assertTrue(cli.out.contains("CORRUPT  ckpt-s000000000002-g1  " + manifest.toAbsolutePath()
                + ": manifest is missing"), cli.out);
        // ls still lists it, flagged.
        Cli ls = Cli.ls(dir);
        assertEquals(CheckpointTool.OK, ls.code);
        assertTrue(ls.out.contains("CORRUPT"), ls.out);
    }

    @Test
    void anEditedManifestFailsItsChecksum() throws Exception {
        Path manifest = newest().resolve("manifest.json");
        String text = Files.readString(manifest).replace("\"worldSize\": 4", "\"worldSize\": 5");
        Files.writeString(manifest, text);
        RestoredCheckpoint r = restore();
        assertEquals(new CheckpointId(1, 1), r.id());
        assertTrue(r.skipped().get(0).contains("manifest checksum mismatch: expected "), r.skipped().toString());
    }

    @Test
    void dataFromAnotherCheckpointIsRejected() throws Exception {
        Files.copy(dir.resolve(new CheckpointId(1, 1).name()).resolve("data.bin"), newest().resolve("data.bin"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        RestoredCheckpoint r = restore();
        assertEquals(new CheckpointId(1, 1), r.id());
        assertTrue(r.skipped().get(0).contains("data file belongs to another checkpoint"), r.skipped().toString());
    }

    @Test
    void whenEveryCheckpointIsCorruptRestoreFailsListingWhy() throws Exception {
        Files.delete(newest().resolve("manifest.json"));
        Files.delete(dir.resolve(new CheckpointId(1, 1).name()).resolve("data.bin"));
        try (Checkpointer c = Checkpointer.builder().directory(dir).writer(false).build()) {
            CheckpointException e = assertThrows(CheckpointException.class, c::restoreLatest);
            assertTrue(e.getMessage().startsWith("no valid checkpoint: all 2 found failed verification: "), e.getMessage());
            assertTrue(e.getMessage().contains("manifest is missing") && e.getMessage().contains("data file is missing"),
                    e.getMessage());
        }
    }

    private static void flipByte(Path file, long offset) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x40);
        }
    }

    /** Output of one CLI call. */
    record Cli(int code, String out, String err) {
        static Cli verify(Path dir) {
            return run((t, o, e) -> t.verify(dir, o, e));
        }

        static Cli ls(Path dir) {
            return run((t, o, e) -> t.ls(dir, o, e));
        }

        static Cli inspect(Path dir) {
            return run((t, o, e) -> t.inspect(dir, o, e));
        }

        interface Call {
            int run(CheckpointTool tool, PrintStream out, PrintStream err);
        }

        static Cli run(Call call) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code;
            try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
                code = call.run(new CheckpointTool(), o, e);
            }
            return new Cli(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        }
    }
}
