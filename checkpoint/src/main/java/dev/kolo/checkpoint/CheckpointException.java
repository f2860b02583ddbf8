package dev.kolo.checkpoint;

import dev.kolo.runtime.KoloException;

/**
 * A checkpoint could not be saved or restored: the message names the checkpoint, the file or replica
 * key, and the cause (e.g. {@code No space left on device}). A failed save never damages the checkpoints
 * that were committed before it.
 */
public class CheckpointException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** @param message what went wrong, where, and what to do */
    public CheckpointException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong, where, and what to do
     * @param cause the underlying failure
     */
    public CheckpointException(String message, Throwable cause) {
        super(message, cause);
    }
}
