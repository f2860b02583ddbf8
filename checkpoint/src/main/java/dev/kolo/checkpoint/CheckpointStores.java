package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.Retention;
import dev.kolo.checkpoint.internal.store.FileSync;
import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stores of one {@link Checkpointer} and their write side: which stores there are, in which order a
 * save writes them and a restore prefers them, how many checkpoints each keeps, writing a checkpoint to
 * all of them and the retention after a save.
 *
 * <p>Two orders because they answer different questions: a save writes the durable directory first (a
 * checkpoint that reached disk survives the cluster), while a restore of equal ids reads the in-memory
 * replica first (no disk read). Package-private: {@code SaveResult}'s constructor is.
 */
final class CheckpointStores {
    // Logged under Checkpointer's name, as before this class was split off: operators filter on it.
    private static final Logger LOG = LoggerFactory.getLogger(Checkpointer.class);

    /** Stores in write order: the durable ones first. */
    final List<CheckpointStore> writeOrder;
    /** Stores in restore preference order for equal ids: the in-memory replica first. */
    final List<CheckpointStore> readOrder;
    /** How many checkpoints each store of {@link #writeOrder} keeps, by index. */
    private final List<Integer> keep;

    private CheckpointStores(List<CheckpointStore> writeOrder, List<CheckpointStore> readOrder, List<Integer> keep) {
        this.writeOrder = List.copyOf(writeOrder);
        this.readOrder = List.copyOf(readOrder);
        this.keep = List.copyOf(keep);
    }

    /**
     * Puts the stores a {@link Checkpointer.Builder} was given in order: the directory (default
     * {@code KOLO_CHECKPOINT_DIR} when nothing else is given), the replica, then the extra stores. A writer
     * first removes leftovers of an interrupted write from the directory (a reader must not: the writer may
     * be writing right now).
     *
     * @param replica makes the in-memory replica store, or null for none
     * @throws IllegalStateException if no store is given and {@code KOLO_CHECKPOINT_DIR} is unset
     */
    static CheckpointStores assemble(Path directory, Supplier<CheckpointStore> replica, List<CheckpointStore> extra,
            int keep, int replicaKeep, boolean writer) {
        List<CheckpointStore> stores = new ArrayList<>();
        List<CheckpointStore> readOrder = new ArrayList<>();
        List<Integer> keeps = new ArrayList<>();
        Path dir = directory;
        if (dir == null && replica == null && extra.isEmpty()) {
            dir = Checkpointer.Builder.defaultDirectory().orElseThrow(() -> new IllegalStateException("no checkpoint "
                    + "store: call directory(Path) or set KOLO_CHECKPOINT_DIR (or -Dkolo.checkpoint.dir)"));
        }
        LocalDirectoryStore local = null;
        if (dir != null) {
            local = new LocalDirectoryStore(dir);
            stores.add(local);
            keeps.add(keep);
        }
        if (replica != null) {
            CheckpointStore inMemory = replica.get();
            stores.add(inMemory);
            readOrder.add(inMemory);
            keeps.add(replicaKeep);
        }
        if (local != null) {
            readOrder.add(local);
        }
        for (CheckpointStore s : extra) {
            stores.add(s);
            readOrder.add(s);
            keeps.add(keep);
        }
        if (writer && local != null) {
            try {
                local.removeLeftovers();
            } catch (IOException e) {
                LOG.warn("cannot remove leftovers of an interrupted write in {}: {}", local.directory(),
                        FileSync.reason(e));
            }
        }
        return new CheckpointStores(stores, readOrder, keeps);
    }

    /**
     * Commits {@code image} to every store, in write order, going on past a failed one so the others still
     * get it.
     *
     * @throws CheckpointException naming every store that failed (and those it reached) if any failed
     */
    SaveResult writeAll(CheckpointImage image, long startNanos, long blockingNanos) {
        List<String> saved = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        Throwable cause = null;
        for (CheckpointStore store : writeOrder) {
            try {
                store.commit(image);
                saved.add(store.describe());
            } catch (IOException | RuntimeException e) {
                failed.add(store.describe() + " (" + FileSync.reason(e) + ")");
                if (cause == null) {
                    cause = e;
                }
            }
        }
        if (!failed.isEmpty()) {
            String msg = "checkpoint " + image.id() + " not saved to " + String.join(", ", failed)
                    + (saved.isEmpty() ? "" : "; it was saved to " + String.join(", ", saved))
                    + "; earlier checkpoints are unaffected";
            LOG.error("{}", msg);
            throw new CheckpointException(msg, cause);
        }
        Duration total = Duration.ofNanos(System.nanoTime() - startNanos);
        LOG.info("checkpoint {} saved: {} bytes to {} in {} ms (caller blocked {} ms)", image.id(), image.dataSize(),
                saved, total.toMillis(), blockingNanos / 1_000_000);
        return new SaveResult(SaveResult.Status.SAVED, image.id(), image.dataSize(), Duration.ofNanos(blockingNanos),
                total, saved);
    }

    /**
     * Retention, on the writer thread after a save completed: deleting old checkpoints is housekeeping
     * that does not delay a checkpoint's durability (unlinking a large file can take a while).
     */
    void retain(CheckpointId justWritten) {
        for (int s = 0; s < writeOrder.size(); s++) {
            for (String w : Retention.apply(writeOrder.get(s), keep.get(s), justWritten)) {
                LOG.warn("checkpoint {}: {}", justWritten, w);
            }
        }
    }
}
