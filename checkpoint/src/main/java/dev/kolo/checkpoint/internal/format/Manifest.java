package dev.kolo.checkpoint.internal.format;

import dev.kolo.checkpoint.CheckpointId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The description of one checkpoint (see README.md for the file format): who wrote it, where each
 * tensor's bytes are in the data file, and their CRC32C. {@code uuid} ties a manifest to its data file,
 * whose header carries the same value.
 */
public record Manifest(
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

    public static final int FORMAT_VERSION = 1;
    public static final String FORMAT_NAME = "kolo-checkpoint";
    public static final String DATA_FILE = "data.bin";
    public static final String MANIFEST_FILE = "manifest.json";
    public static final int HEADER_BYTES = DataHeader.SIZE;
    public static final int ALIGNMENT = 64;

    /** @return {@code offset} rounded up to the next multiple of {@link #ALIGNMENT} */
    public static long align(long offset) {
        long a = ALIGNMENT;
        return (offset + a - 1) / a * a;
    }

    public long tensorBytes() {
        long n = 0;
        for (TensorEntry t : tensors) {
            n += t.length();
        }
        return n;
    }
}
