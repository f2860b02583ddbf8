package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.store.LatestPointer;
import dev.kolo.testing.FuzzLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Fuzz target of the checkpoint files as {@code worker.jar checkpoint ls|inspect|verify} reads them: the input
 * becomes a checkpoint directory (a manifest, a data file and a {@code latest} pointer), and every command
 * must end with one of its exit codes and messages, never an exception or a stack trace.
 *
 * <p>Input layout: a flags byte (bit 0: reseal the manifest's checksum, bit 1: fix the data header's
 * checksum), a 2-byte manifest length and the manifest, a 1-byte pointer length and the pointer, then the
 * data file. {@link #pack} builds it from files, which is how the seeds were made.
 */
class CheckpointToolFuzzTest {
    private static final CheckpointId ID = new CheckpointId(1200, 7);
    private static Path root;

    private static Path root() throws IOException {
        if (root == null) {
            root = Files.createTempDirectory("kolo-checkpoint-fuzz");
            root.toFile().deleteOnExit();
        }
        return root;
    }

    /** The input layout from the three files' bytes. */
    static byte[] pack(int flags, byte[] manifest, byte[] latest, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(1 + 2 + manifest.length + 1 + latest.length + data.length);
        b.put((byte) flags).putShort((short) manifest.length).put(manifest).put((byte) latest.length).put(latest)
                .put(data);
        return b.array();
    }

    @FuzzTest
    void commands(byte[] input) throws Exception {
        FuzzLimits.run(input, (16 << 20) + 64L * input.length, () -> run(input));
    }

    private static void run(byte[] input) throws IOException {
        if (input.length < 4) {
            return;
        }
        ByteBuffer in = ByteBuffer.wrap(input);
        int flags = in.get();
        byte[] manifest = new byte[Math.min(in.getShort() & 0xffff, in.remaining())];
        in.get(manifest);
        byte[] latest = new byte[in.hasRemaining() ? Math.min(in.get() & 0xff, in.remaining()) : 0];
        in.get(latest);
        byte[] data = new byte[in.remaining()];
        in.get(data);
        if ((flags & 1) != 0) {
            manifest = Reseal.manifest(manifest);
        }
        if ((flags & 2) != 0 && data.length >= Manifest.HEADER_BYTES) {
            CRC32C crc = new CRC32C();
            crc.update(data, 0, 60);
            ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).putInt(60, (int) crc.getValue());
        }
        Path dir = root().resolve(ID.name());
        Files.createDirectories(dir);
        Files.write(dir.resolve(Manifest.MANIFEST_FILE), manifest);
        Files.write(dir.resolve(Manifest.DATA_FILE), data);
        Files.write(root().resolve(LatestPointer.FILE), latest);
        CheckpointTool tool = new CheckpointTool();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            for (String command : new String[] {"ls", "inspect", "verify"}) {
                int code = tool.run(new String[] {command, root().toString()}, o, e);
                assertTrue(code == CheckpointTool.OK || code == CheckpointTool.CORRUPT || code == CheckpointTool.USAGE,
                        command + " exited " + code);
            }
            int code = tool.run(new String[] {"verify", dir.toString()}, o, e);
            assertTrue(code == CheckpointTool.OK || code == CheckpointTool.CORRUPT, "verify of one exited " + code);
        }
        String errors = err.toString(StandardCharsets.UTF_8);
        assertTrue(!errors.contains("\tat ") && !errors.contains("Exception:"), errors);
    }
}
