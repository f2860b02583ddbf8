package dev.kolo.checkpoint;

import java.time.Duration;
import java.util.List;

/**
 * The outcome of a save that did not fail. A save that failed completes its future exceptionally with a
 * {@link CheckpointException} instead.
 */
public final class SaveResult {
    /** What happened to the requested checkpoint. */
    public enum Status {
        /** Written and committed to every configured store. */
        SAVED,
        /** Not written: the previous save was still in flight and the policy is {@link InFlightPolicy#SKIP}. */
        SKIPPED_IN_FLIGHT,
        /** Not written: this worker is not the writer (by default only rank 0 writes). */
        SKIPPED_NOT_WRITER
    }

    private final Status status;
    private final CheckpointId id;
    private final long bytes;
    private final Duration blocking;
    private final Duration total;
    private final List<String> stores;

    SaveResult(Status status, CheckpointId id, long bytes, Duration blocking, Duration total, List<String> stores) {
        this.status = status;
        this.id = id;
        this.bytes = bytes;
        this.blocking = blocking;
        this.total = total;
        this.stores = List.copyOf(stores);
    }

    static SaveResult skipped(Status status, CheckpointId id) {
        return new SaveResult(status, id, 0, Duration.ZERO, Duration.ZERO, List.of());
    }

    /** @return what happened */
    public Status status() {
        return status;
    }

    /** @return true if the checkpoint was written and committed */
    public boolean saved() {
        return status == Status.SAVED;
    }

    /** @return the checkpoint's id */
    public CheckpointId id() {
        return id;
    }

    /** @return the size of the data written per store, in bytes (0 if not saved) */
    public long bytes() {
        return bytes;
    }

    /** @return how long {@code save()} blocked the caller (the snapshot into the staging buffer) */
    public Duration blocking() {
        return blocking;
    }

    /** @return from the call of {@code save()} to the commit in the last store */
    public Duration total() {
        return total;
    }

    /** @return the stores the checkpoint was committed to, as {@link CheckpointStore#describe()} */
    public List<String> stores() {
        return stores;
    }

    @Override
    public String toString() {
        return "SaveResult[" + status + " " + id + (saved() ? ", " + bytes + " bytes, blocking " + blocking.toMillis()
                + " ms, total " + total.toMillis() + " ms, " + stores : "") + "]";
    }
}
