package dev.kolo.checkpoint.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.checkpoint.CorruptCheckpointException;
import dev.kolo.checkpoint.Reseal;
import dev.kolo.testing.FuzzLimits;

/**
 * Fuzz target of {@link ManifestCodec#decode}: any bytes either decode or are rejected with
 * {@link CorruptCheckpointException}. Each input is tried as it is (which mostly exercises the checksum line)
 * and resealed with a correct checksum (which reaches the JSON and every field check). What decodes encodes
 * to bytes that decode and encode to the same bytes again.
 */
class ManifestCodecFuzzTest {

    @FuzzTest
    void decode(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 20) + 64L * input.length, () -> {
            attempt(input);
            attempt(Reseal.manifest(input));
        });
    }

    private static void attempt(byte[] bytes) {
        Manifest m;
        try {
            m = ManifestCodec.decode(bytes, "fuzz/manifest.json");
        } catch (CorruptCheckpointException rejected) {
            return;
        }
        byte[] once = ManifestCodec.encode(m);
        byte[] twice = ManifestCodec.encode(ManifestCodec.decode(once, "fuzz/again.json"));
        assertArrayEquals(once, twice);
    }
}
