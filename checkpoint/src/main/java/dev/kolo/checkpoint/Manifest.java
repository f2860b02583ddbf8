package dev.kolo.checkpoint;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The description of one checkpoint (see README.md for the file format): who wrote it, where each
 * tensor's bytes are in the data file, and their CRC32C. {@code uuid} ties a manifest to its data file,
 * whose header carries the same value.
 */
record Manifest(
        int formatVersion,
        CheckpointId id,
        UUID uuid,
        String job,
        long epoch,
        int worldSize,
        Instant createdAt,
        long dataBytes,
        Map<String, Object> scalars,
        String metadataJson,
        List<TensorEntry> tensors) {

    static final int FORMAT_VERSION = 1;
    static final String FORMAT_NAME = "kolo-checkpoint";
    static final String DATA_FILE = "data.bin";
    static final String MANIFEST_FILE = "manifest.json";
    static final int HEADER_BYTES = DataHeader.SIZE;
    static final int ALIGNMENT = 64;

    long tensorBytes() {
        long n = 0;
        for (TensorEntry t : tensors) {
            n += t.length();
        }
        return n;
    }
}
