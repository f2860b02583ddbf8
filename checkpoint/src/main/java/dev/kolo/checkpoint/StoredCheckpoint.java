package dev.kolo.checkpoint;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Read access to one stored checkpoint's raw bytes, as given by {@link CheckpointStore#open}. Nothing
 * here is verified; {@code Checkpointer} and {@code CheckpointTool} verify what they read.
 */
public interface StoredCheckpoint extends Closeable {

    /** @return the checkpoint's id */
    CheckpointId id();

    /** @return where it is, for messages (a directory, or a replica map and key) */
    String location();

    /** @return where the manifest is, for messages */
    String manifestLocation();

    /** @return where the data is, for messages */
    String dataLocation();

    /**
     * @return the manifest's bytes
     * @throws java.nio.file.NoSuchFileException if the manifest is missing
     */
    byte[] readManifest() throws IOException;

    /**
     * @return the size of the data in bytes as stored (a truncated file shows here)
     * @throws java.nio.file.NoSuchFileException if the data is missing
     */
    long dataSize() throws IOException;

    /**
     * Returns bytes {@code [offset, offset + length)} of the data as a direct, little-endian buffer
     * (position 0, limit {@code length}). It may be a read-only memory mapping of the file, valid after
     * {@link #close()}. Callers read ranges in increasing offset order; stores may rely on that.
     */
    ByteBuffer readData(long offset, int length) throws IOException;
}
