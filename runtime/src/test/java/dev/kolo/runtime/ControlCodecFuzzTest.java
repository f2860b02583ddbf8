package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.testing.FuzzLimits;
import io.vertx.core.buffer.Buffer;

/**
 * Fuzz target of {@link ControlCodec#decodeFromWire}: any bytes either decode or are rejected with
 * {@link IllegalArgumentException}; what decodes survives the wire again unchanged (so a receiver can forward
 * it), and no input allocates more than a small multiple of its size. Run in fuzzing mode by the build (see
 * README, "Fuzzing"); crashing inputs are kept in {@code ControlCodecFuzzTestInputs/decode}.
 */
class ControlCodecFuzzTest {
    private static final ControlCodec CODEC = new ControlCodec();

    @FuzzTest
    void decode(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 20) + 64L * input.length, () -> {
            ControlMessage m;
            try {
                m = CODEC.decodeFromWire(0, Buffer.buffer(input));
            } catch (IllegalArgumentException rejected) {
                return;
            }
            Buffer again = Buffer.buffer();
            CODEC.encodeToWire(again, m);
            assertEquals(m, CODEC.decodeFromWire(0, again));
        });
    }
}
