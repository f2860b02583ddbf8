package dev.kolo.checkpoint;

import java.util.Optional;

/**
 * A stored checkpoint failed verification: missing or unreadable manifest, truncated data, a header
 * that does not match its manifest, or a tensor whose CRC32C differs from the manifest's. The message is
 * one line naming the file (or replica key), the tensor if any, and expected versus actual values.
 */
public class CorruptCheckpointException extends CheckpointException {
    private static final long serialVersionUID = 1L;

    private final String location;
    private final String tensor;

    /**
     * @param location the file or replica key that is damaged
     * @param tensor the damaged tensor, or null when the damage is not in one tensor
     * @param message what is wrong, including expected and actual values where there are some
     */
    public CorruptCheckpointException(String location, String tensor, String message) {
        super(location + ": " + message);
        this.location = location;
        this.tensor = tensor;
    }

    /** @return the file or replica key that is damaged */
    public String location() {
        return location;
    }

    /** @return the damaged tensor's name, when the damage is in one tensor */
    public Optional<String> tensor() {
        return Optional.ofNullable(tensor);
    }
}
