package dev.kolo.checkpoint;

import java.io.IOException;
import java.util.List;

/**
 * Somewhere checkpoints are kept: a local directory, the in-memory cluster replica (both made by
 * {@link Checkpointer.Builder}), or an object store added with {@link Checkpointer.Builder#store}. A store
 * only moves bytes and makes a commit atomic; checksums are verified by the reader for every store alike.
 *
 * <p>Contract for implementations:
 * <ul>
 *   <li>{@link #commit} publishes a checkpoint atomically: until it returns normally, {@link #list} does
 *       not show it, and a failure (or a crash of the writer) at any moment leaves the checkpoints already
 *       committed untouched and loadable. Committing an id that exists replaces it.</li>
 *   <li>{@link #list} shows only committed checkpoints, newest ({@link CheckpointId} order) first.</li>
 *   <li>{@link #delete} removes a committed checkpoint so that it never shows half-deleted as committed.</li>
 * </ul>
 * One writer per store at a time (by default only rank 0 writes); any number of readers.
 */
public interface CheckpointStore extends AutoCloseable {

    /** @return a short human description for messages, e.g. {@code directory /data/ckpt} */
    String describe();

    /**
     * Stores {@code image} (its data, then its manifest) and commits it atomically.
     *
     * @throws IOException if it could not be stored; nothing committed before is affected
     */
    void commit(CheckpointImage image) throws IOException;

    /** @return the ids of the committed checkpoints, newest first */
    List<CheckpointId> list() throws IOException;

    /**
     * Opens a committed checkpoint for reading. Opening does not verify anything.
     *
     * @throws java.nio.file.NoSuchFileException if there is no such checkpoint
     */
    StoredCheckpoint open(CheckpointId id) throws IOException;

    /** Deletes a committed checkpoint (retention); no effect if it does not exist. */
    void delete(CheckpointId id) throws IOException;

    /** Releases resources; the stored checkpoints stay. */
    @Override
    default void close() {
    }
}
