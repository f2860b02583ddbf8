package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.ManifestCodec;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ManifestCodecTest {
    private static CheckpointImage image() {
        CheckpointState s = CheckpointState.builder(1200).epoch(3).generation(7).worldSize(8)
                .tensor("w \"quoted\" \u00e9", Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3))
                .tensor("scalar", Tensor.of(new double[] {2.5}))
                .tensor("empty", Tensor.allocate(DType.BFLOAT16, 0, 4))
                .tensor("bytes", Tensor.of(new byte[] {1, 2, 3}, 3))
                .scalar("lr", 1e-4).scalar("nan", Double.NaN).scalar("inf", Double.NEGATIVE_INFINITY)
                .scalar("seed", Long.MIN_VALUE).scalar("name", "adam \"β\"\n")
                .metadataJson(" {\"nested\": {\"a\": [1, 2.50, null]}, \"ok\": true} ")
                .build();
        return CheckpointImage.ofTensors(s, "job-1");
    }

    @Test
    void decodesWhatItEncodes() throws Exception {
        CheckpointImage img = image();
        byte[] bytes = img.manifestBytes();
        Manifest m = ManifestCodec.decode(bytes, "m.json");
        Manifest expected = img.manifestWithChecksums();
        assertEquals(expected.id(), m.id());
        assertEquals(expected.uuid(), m.uuid());
        assertEquals("job-1", m.job());
        assertEquals(3, m.epoch());
        assertEquals(8, m.worldSize());
        assertEquals(expected.createdAt(), m.createdAt());
        assertEquals(expected.dataBytes(), m.dataBytes());
        assertEquals("{\"nested\":{\"a\":[1,2.50,null]},\"ok\":true}", m.metadataJson());
        assertEquals(1e-4, m.scalars().get("lr"));
        assertTrue(((Double) m.scalars().get("nan")).isNaN());
        assertEquals(Double.NEGATIVE_INFINITY, m.scalars().get("inf"));
        assertEquals(Long.MIN_VALUE, m.scalars().get("seed"));
        assertEquals("adam \"β\"\n", m.scalars().get("name"));
        assertEquals(expected.tensors().size(), m.tensors().size());
        for (int i = 0; i < m.tensors().size(); i++) {
            TensorEntry a = expected.tensors().get(i);
            TensorEntry b = m.tensors().get(i);
            assertEquals(a.name(), b.name());
            assertEquals(a.dtype(), b.dtype());
            assertArrayEquals(a.shape(), b.shape());
            assertEquals(a.offset(), b.offset());
            assertEquals(a.length(), b.length());
            assertEquals(a.crc32c(), b.crc32c());
            assertEquals(0, b.offset() % 64);
        }
        // Human-readable: pretty-printed, checksum line last.
        String text = new String(bytes, StandardCharsets.UTF_8);
        assertTrue(text.startsWith("{\n  \"format\": \"kolo-checkpoint\",\n"), text);
        assertTrue(text.matches("(?s).*\n  \"manifestCrc32c\": \"[0-9a-f]{8}\"\n}\n"), text);
    }

    @Test
    void detectsAnyChangedByte() {
        byte[] bytes = image().manifestBytes();
        for (int i = 0; i < bytes.length; i += 7) {
            byte[] copy = bytes.clone();
            copy[i] ^= 0x01;
            CorruptCheckpointException e = assertThrows(CorruptCheckpointException.class,
                    () -> ManifestCodec.decode(copy, "/x/manifest.json"), "flip at " + i);
            assertTrue(e.getMessage().startsWith("/x/manifest.json: "), e.getMessage());
        }
    }

    @Test
    void reportsTruncationAndChecksumMismatchClearly() {
        byte[] bytes = image().manifestBytes();
        CorruptCheckpointException t = assertThrows(CorruptCheckpointException.class,
                () -> ManifestCodec.decode(Arrays.copyOf(bytes, bytes.length / 2), "m"));
        assertTrue(t.getMessage().contains("truncated"), t.getMessage());
        byte[] edited = new String(bytes, StandardCharsets.UTF_8).replace("\"job-1\"", "\"job-2\"")
                .getBytes(StandardCharsets.UTF_8);
        CorruptCheckpointException c = assertThrows(CorruptCheckpointException.class,
                () -> ManifestCodec.decode(edited, "m"));
        assertTrue(c.getMessage().matches("m: manifest checksum mismatch: expected [0-9a-f]{8}, actual [0-9a-f]{8}"),
                c.getMessage());
        assertThrows(CorruptCheckpointException.class, () -> ManifestCodec.decode(new byte[0], "m"));
    }

    private static String rejection(byte[] bytes) {
        return assertThrows(CorruptCheckpointException.class, () -> ManifestCodec.decode(bytes, "m")).getMessage();
    }

    @Test
    void resealedEditsStillDecode() {
        byte[] bytes = image().manifestBytes();
        assertEquals(7, ManifestCodec.decode(Reseal.edit(bytes, "\"epoch\": 3", "\"epoch\": 7"), "m").epoch());
    }

    @Test
    void forgedOffsetsCannotOverflowPastTheDataSize() {
        byte[] bytes = image().manifestBytes();
        String text = new String(bytes, StandardCharsets.UTF_8);
        String offset = text.replaceAll("(?s).*\"name\":\"bytes\".*?\"offset\":(\\d+).*", "$1");
        // A 64-aligned offset near Long.MAX_VALUE: offset + length wraps negative and once passed the check.
        long forged = (Long.MAX_VALUE / 64) * 64;
        String message = rejection(Reseal.edit(bytes, "\"offset\":" + offset + ",\"length\":3",
                "\"offset\":" + forged + ",\"length\":3"));
        assertTrue(message.contains("outside the data file"), message);
    }

    @Test
    void shapesThatOverflowAreCorruptNotArithmeticErrors() {
        byte[] bytes = image().manifestBytes();
        String huge = "[4611686018427387904,4611686018427387904]";
        assertTrue(rejection(Reseal.edit(bytes, "\"shape\":[3]", "\"shape\":" + huge)).contains("invalid manifest"));
        // A zero dim first hides nothing: the other dims are bounded too.
        String zeroFirst = "[0,4611686018427387904,4611686018427387904]";
        assertTrue(rejection(Reseal.edit(bytes, "\"shape\":[0,4]", "\"shape\":" + zeroFirst))
                .contains("exceeds"));
        assertTrue(rejection(Reseal.edit(bytes, "\"shape\":[3]", "\"shape\":[-3]")).contains("invalid shape"));
    }

    @Test
    void wrongTypesAndMissingFieldsAreNamed() {
        byte[] bytes = image().manifestBytes();
        assertTrue(rejection(Reseal.edit(bytes, "\"worldSize\": 8", "\"worldSize\": \"8\"")).contains("worldSize"));
        assertTrue(rejection(Reseal.edit(bytes, "\"dtype\":\"INT8\"", "\"dtype\":\"INT9\"")).contains("INT9"));
        assertTrue(rejection(Reseal.edit(bytes, "\"step\": 1200,", "")).contains("step"));
        assertTrue(rejection(Reseal.edit(bytes, "\"uuid\": \"", "\"uuid\": \"x")).contains("invalid manifest"));
    }

    @Test
    void oversizedManifestIsRejectedBeforeParsing() {
        String message = rejection(new byte[ManifestCodec.MAX_BYTES + 1]);
        assertTrue(message.contains("more than " + ManifestCodec.MAX_BYTES), message);
    }
}
