package dev.kolo.checkpoint;

import java.time.Instant;
import java.util.List;

/**
 * A checkpoint that was read and verified. Its tensors are read-only views of the stored bytes (for a
 * local directory, a memory mapping of the data file) unless the checkpointer was built with
 * {@code copyOnRestore(true)}.
 */
public final class RestoredCheckpoint {
    private final CheckpointState state;
    private final String job;
    private final Instant createdAt;
    private final String store;
    private final String location;
    private final List<String> skipped;

    RestoredCheckpoint(CheckpointState state, String job, Instant createdAt, String store, String location,
            List<String> skipped) {
        this.state = state;
        this.job = job;
        this.createdAt = createdAt;
        this.store = store;
        this.location = location;
        this.skipped = List.copyOf(skipped);
    }

    /** @return the restored state: tensors, scalars, metadata, step, epoch, generation, world size */
    public CheckpointState state() {
        return state;
    }

    /** @return the checkpoint's id */
    public CheckpointId id() {
        return state.id();
    }

    /** @return the job name recorded when it was saved */
    public String job() {
        return job;
    }

    /** @return when it was saved */
    public Instant createdAt() {
        return createdAt;
    }

    /** @return the store it was read from, as {@link CheckpointStore#describe()} */
    public String store() {
        return store;
    }

    /** @return where exactly it was read from (a directory or a replica key) */
    public String location() {
        return location;
    }

    /**
     * @return newer checkpoints that were skipped because they failed verification, one line each naming
     *     the file or key, the tensor, expected and actual values
     */
    public List<String> skipped() {
        return skipped;
    }

    @Override
    public String toString() {
        return "RestoredCheckpoint[" + id() + " from " + location + (skipped.isEmpty() ? "" : ", skipped "
                + skipped.size() + " corrupt newer") + "]";
    }
}
