package dev.kolo.checkpoint.internal.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.checkpoint.internal.format.Json;
import dev.kolo.testing.FuzzLimits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target of the JSON reader behind manifests, user metadata and the cluster replica's index:
 * {@link Json#parse} rejects with {@link Json.JsonException} only and what it reads writes back to JSON that
 * reads the same; {@link ClusterReplicaStore#decodeIndex} (bytes another member wrote) rejects with
 * {@link IOException} only.
 */
class JsonFuzzTest {

    @FuzzTest
    void parse(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 20) + 64L * input.length, () -> {
            String text = new String(input, StandardCharsets.UTF_8);
            try {
                Object value = Json.parse(text);
                String written = Json.write(value);
                assertEquals(written, Json.write(Json.parse(written)));
            } catch (Json.JsonException rejected) {
                // the only way to refuse text
            }
            try {
                ClusterReplicaStore.decodeIndex(input, "fuzz");
            } catch (IOException rejected) {
                // an unreadable index is reported as such
            }
        });
    }
}
