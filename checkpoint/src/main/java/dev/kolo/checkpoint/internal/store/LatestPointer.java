package dev.kolo.checkpoint.internal.store;

import dev.kolo.checkpoint.CheckpointId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.UUID;

/**
 * The {@code latest} file of a checkpoint directory: one line naming the newest committed checkpoint
 * (e.g. {@code ckpt-s000000001200-g3}). Replaced atomically: written to a temporary name, fsynced,
 * renamed over {@code latest}, then the directory is fsynced. It is a convenience for people and
 * scripts; the commit point of a checkpoint is the rename of its directory, so a reader never depends on
 * the pointer being current.
 */
public final class LatestPointer {
    public static final String FILE = "latest";
    static final String TEMP_PREFIX = ".latest.tmp-";
    /** The longest pointer file read: a name of 19-digit step and generation plus a newline fits easily. */
    static final int MAX_BYTES = 128;

    private LatestPointer() {
    }

    static void update(Path dir, CheckpointId id) throws IOException {
        Path tmp = dir.resolve(TEMP_PREFIX + UUID.randomUUID().toString().substring(0, 8));
        try {
            FileSync.writeDurably(tmp, (id.name() + "\n").getBytes(StandardCharsets.US_ASCII));
            Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        FileSync.forceDirectory(dir);
    }

    /** @return the checkpoint the pointer names, or empty if there is no pointer or it is unreadable */
    static Optional<CheckpointId> read(Path dir) {
        try {
            // A checkpoint name is short: read a little more than the longest one, never the whole of a big file.
            byte[] head;
            try (java.io.InputStream in = Files.newInputStream(dir.resolve(FILE))) {
                head = in.readNBytes(MAX_BYTES + 1);
            }
            if (head.length > MAX_BYTES) {
                return Optional.empty();
            }
            return CheckpointId.parse(new String(head, StandardCharsets.US_ASCII).strip());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
