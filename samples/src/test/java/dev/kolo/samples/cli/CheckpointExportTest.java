package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code checkpoint export DIR OUT}: the newest checkpoint's tensors as NumPy .npy files, bit for bit. */
class CheckpointExportTest {

    @Test
    void tensorsBecomeNpyFilesWithTheirTypeShapeAndBytes(@TempDir Path dir) throws Exception {
        Path ckpt = dir.resolve("ckpt");
        float[] w = {1.5f, -2f, 3.25f, 0f, 7f, -0.5f};
        long[] steps = {1, 2, 3, 40_000_000_000L};
        try (Checkpointer c = Checkpointer.builder().job("export").directory(ckpt).build()) {
            c.save(CheckpointState.builder(5).tensor("layer1/w", Tensor.of(w, 2, 3))
                    .tensor("counts", Tensor.of(steps, 4)).tensor("h", Tensor.of(DType.BFLOAT16, new float[] {1f, -3f}, 2))
                    .scalar("lr", 0.1).build()).get();
            c.save(CheckpointState.builder(10).tensor("layer1/w", Tensor.of(new float[] {9, 9, 9, 9, 9, 9}, 2, 3))
                    .tensor("counts", Tensor.of(steps, 4)).tensor("h", Tensor.of(DType.BFLOAT16, new float[] {2f, 4f}, 2))
                    .scalar("lr", 0.1).build()).get();
        }
        Path out = dir.resolve("out");
        assertEquals(0, WorkerCli.run("checkpoint", "export", ckpt.toString(), out.toString()));

        Npy first = Npy.read(out.resolve("layer1_w.npy"));
        assertEquals("<f4", first.descr);
        assertEquals("(2, 3)", first.shape);
        float[] got = new float[6];
        first.data.asFloatBuffer().get(got);
        assertArrayEquals(new float[] {9, 9, 9, 9, 9, 9}, got, "the newest checkpoint (step 10)");

        Npy counts = Npy.read(out.resolve("counts.npy"));
        assertEquals("<i8", counts.descr);
        assertEquals("(4,)", counts.shape);
        long[] c = new long[4];
        counts.data.asLongBuffer().get(c);
        assertArrayEquals(steps, c);

        Npy h = Npy.read(out.resolve("h.npy"));
        assertEquals("<f4", h.descr, "bfloat16 widened to float32");
        float[] hv = new float[2];
        h.data.asFloatBuffer().get(hv);
        assertArrayEquals(new float[] {2f, 4f}, hv);
    }

    /** A .npy file as NumPy reads it: magic, version 1.0, header, then the data at a multiple of 64. */
    private record Npy(String descr, String shape, ByteBuffer data) {
        static Npy read(Path file) throws Exception {
            byte[] bytes = Files.readAllBytes(file);
            assertArrayEquals(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}, Arrays.copyOf(bytes, 8));
            int headerLen = (bytes[8] & 0xff) | (bytes[9] & 0xff) << 8;
            assertEquals(0, (10 + headerLen) % 64, "data aligned to 64 bytes");
            String header = new String(bytes, 10, headerLen, StandardCharsets.US_ASCII);
            assertTrue(header.endsWith("\n") && header.contains("'fortran_order': False"), header);
            String descr = header.replaceAll(".*'descr': '([^']*)'.*\\s*", "$1");
            String shape = header.replaceAll(".*'shape': (\\([^)]*\\)).*\\s*", "$1");
            ByteBuffer data = ByteBuffer.wrap(bytes, 10 + headerLen, bytes.length - 10 - headerLen).slice()
                    .order(ByteOrder.LITTLE_ENDIAN);
            return new Npy(descr, shape, data);
        }
    }
}
