package dev.kolo.elastic;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.RestoredCheckpoint;
import dev.kolo.elastic.internal.StateEntry;
import dev.kolo.elastic.internal.StateRegistry;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The committed side of an {@link ElasticState}: the off-heap {@link Snapshot} of the last commit (or sync,
 * or restored checkpoint), the commit count, the generation the snapshot was agreed in, and the
 * {@link CheckpointLink} every {@code checkpointEvery}-th commit is handed to.
 *
 * <p>Apart from {@code ElasticState} so that the public class is the API and the agreement between ranks,
 * while this one keeps the bookkeeping that decides what a restore returns to, what a sync exchanges and
 * which commit the store still lacks. Not thread-safe: used by the one training thread.
 */
final class CommittedState implements AutoCloseable {
    private final Kolo kolo;
    private final StateRegistry live;
    private final Snapshot snapshot = new Snapshot();
    /** Null when no checkpoint store is configured. */
    private final CheckpointLink checkpoints;
    /** 0 without a store: no commit is ever due. */
    private final int checkpointEvery;
    private long commits;
    /** The generation in which the snapshot was agreed (by a commit or a sync); 0 for none or a fresh one. */
    private long snapshotGeneration;
    private boolean synced;

    CommittedState(Kolo kolo, StateRegistry live, CheckpointLink checkpoints, int checkpointEvery) {
        this.kolo = kolo;
        this.live = live;
        this.checkpoints = checkpoints;
        this.checkpointEvery = checkpoints == null ? 0 : checkpointEvery;
    }

    /** Copies the live state into the snapshot as the next commit and, on rank 0 when due, hands it to the store. */
    void commit() {
        commits++;
        snapshot.capture(live.entries(), live.values(), commits);
        snapshotGeneration = kolo.generation();
        synced = true;
        if (checkpointEvery > 0 && commits % checkpointEvery == 0 && kolo.rank() == 0) {
            checkpoints.save(snapshot, live.entries(), kolo.generation(), kolo.size());
        }
    }

    /** Returns the live state to the snapshot. */
    void restore() {
        if (!snapshot.taken()) {
            throw new IllegalStateException("nothing to restore: no commit or sync yet");
        }
        snapshot.restoreInto(live.entries(), live.values());
        commits = snapshot.commits();
    }

    /** Reads the newest valid checkpoint into the snapshot and then into the live state, on this rank only. */
    Optional<CheckpointId> restoreLatest() {
        if (checkpoints == null) {
            return Optional.empty();
        }
        Optional<RestoredCheckpoint> r = checkpoints.restoreInto(snapshot, live.entries(), live.values());
        r.ifPresent(c -> {
            snapshotGeneration = c.id().generation();
            snapshot.restoreInto(live.entries(), live.values());
            commits = snapshot.commits();
            synced = true;
        });
        return r.map(RestoredCheckpoint::id);
    }

    /**
     * Reads the newest valid checkpoint into the snapshot only (a sync then decides whose state wins and
     * makes it live).
     *
     * @return the checkpoint read, or empty if there is none or no store is configured
     */
    Optional<RestoredCheckpoint> restoreFromCheckpoint() {
        if (checkpoints == null) {
            return Optional.empty();
        }
        Optional<RestoredCheckpoint> r = checkpoints.restoreInto(snapshot, live.entries(), live.values());
        if (r.isPresent()) {
            synced = true;
            snapshotGeneration = r.get().id().generation();
        }
        return r;
    }

    /** A worker with no state yet: its live (initial) state becomes its snapshot, at commit 0. */
    void captureLocal() {
        snapshot.capture(live.entries(), live.values(), commits);
    }

    /** After a sync filled the snapshot: the live state becomes it. */
    void finishSync() {
        snapshotGeneration = kolo.generation();
        snapshot.restoreInto(live.entries(), live.values());
        commits = snapshot.commits();
        synced = true;
    }

    /** @return CRC32C over the snapshot's tensors and the encoded values {@code blob} */
    long snapshotCrc(byte[] blob) {
        CRC32C c = new CRC32C();
        for (StateEntry e : live.entries()) {
            c.update(snapshot.buffer(e));
        }
        c.update(blob);
        return c.getValue();
    }

    /**
     * Waits for a save in flight and, when the store does not hold the last commit (not due, or skipped
     * because the previous save was still being written), writes it now and waits. Only rank 0 writes.
     */
    void finishCheckpoints() {
        if (checkpoints == null || kolo.rank() != 0 || !snapshot.taken()) {
            return;
        }
        checkpoints.awaitSaves();
        if (checkpoints.newestInStore.get() < snapshot.commits()) {
            checkpoints.save(snapshot, live.entries(), snapshotGeneration, kolo.size());
            checkpoints.awaitSaves();
        }
    }

    /** Waits for a checkpoint being written, if any (bounded by the save timeout). */
    void awaitCheckpoints() {
        if (checkpoints != null) {
            checkpoints.awaitSaves();
        }
    }

    /**
     * A fixed job stops at the commit just taken, as every rank agreed ({@link ElasticState#stepDone()}): rank 0
     * writes it as a checkpoint and waits, and every rank learns whether the store holds it, so that each says the
     * same.
     *
     * @param askedBy the rank that was asked to stop
     * @return the exception every rank throws, saying where the job resumes
     */
    ElasticJobFailedException stopHere(int askedBy) {
        finishCheckpoints();
        long mine = kolo.rank() == 0 && checkpoints != null ? checkpoints.newestInStore.get() : -1;
        long stored = kolo.allreduce("kolo.elastic.stopped", Tensor.of(new long[] {mine}, 1), ReduceOp.MAX)
                .toLongArray()[0];
        String resume = stored >= commits
                ? "the newest checkpoint holds it (" + newestCheckpoint() + "): start all " + kolo.size() + " workers "
                        + "again and they resume from this step"
                : "no checkpoint store holds it (" + newestCheckpoint() + "): started again, the job begins at the "
                        + "newest checkpoint there is";
        return ElasticJobFailedException.stoppedAsAsked("stopped as asked (rank " + askedBy + " was told to stop) at "
                + "commit " + commits + "; " + resume);
    }

    /** @return the number of checkpoints handed to the store that were written */
    long checkpointsSaved() {
        return checkpoints == null ? 0 : checkpoints.saved.get();
    }

    /** @return the newest checkpoint any store holds, or why there is none, for messages */
    String newestCheckpoint() {
        return checkpoints == null ? "no checkpoint store configured (KOLO_CHECKPOINT_DIR)" : checkpoints.newest();
    }

    Snapshot snapshot() {
        return snapshot;
    }

    long commits() {
        return commits;
    }

    boolean synced() {
        return synced;
    }

    long snapshotGeneration() {
        return snapshotGeneration;
    }

    /** Waits for a checkpoint being written, then closes the checkpoint stores the link opened. */
    @Override
    public void close() {
        if (checkpoints != null) {
            checkpoints.close();
        }
    }
}
