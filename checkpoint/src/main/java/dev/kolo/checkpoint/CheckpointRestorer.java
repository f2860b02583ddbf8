package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.CheckpointMetrics;
import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import dev.kolo.checkpoint.internal.store.FileSync;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read side of a {@link Checkpointer}: lists the checkpoints of its stores, picks the newest that
 * verifies (falling back past corrupt or unreadable ones and reporting each), and turns a verified
 * checkpoint back into a {@link CheckpointState}. Package-private: {@code RestoredCheckpoint}'s constructor is.
 */
final class CheckpointRestorer {
    // Logged under Checkpointer's name, as before this class was split off: operators filter on it. By name, not
    // by class, so that the restorer does not refer to the checkpointer that creates it.
    private static final Logger LOG = LoggerFactory.getLogger("dev.kolo.checkpoint.Checkpointer");

    /** Stores in restore preference order for equal ids: the in-memory replica first. */
    private final List<CheckpointStore> readOrder;
    /** True to copy restored tensors into fresh memory; false to keep the read-only mapping of the data file. */
    private final boolean copyOnRestore;
    private final CheckpointMetrics metrics;

    CheckpointRestorer(List<CheckpointStore> readOrder, boolean copyOnRestore, CheckpointMetrics metrics) {
        this.readOrder = readOrder;
        this.copyOnRestore = copyOnRestore;
        this.metrics = metrics;
    }

    /** See {@link Checkpointer#restoreLatest(Predicate)}. */
    Optional<RestoredCheckpoint> restoreLatest(Predicate<CheckpointId> accept) {
        List<String> skipped = new ArrayList<>();
        List<Candidate> candidates = new ArrayList<>();
        for (int s = 0; s < readOrder.size(); s++) {
            CheckpointStore store = readOrder.get(s);
            try {
                for (CheckpointId id : store.list()) {
                    if (accept.test(id)) {
                        candidates.add(new Candidate(id, s, store));
                    }
                }
            } catch (IOException | RuntimeException e) {
                String line = "cannot list " + store.describe() + ": " + FileSync.reason(e);
                LOG.warn("{}", line);
                skipped.add(line);
            }
        }
        candidates.sort(Comparator.comparing(Candidate::id).reversed().thenComparingInt(Candidate::order));
        for (Candidate c : candidates) {
            try {
                long start = System.nanoTime();
                RestoredCheckpoint r = read(c.store(), c.id(), skipped);
                metrics.restored(Duration.ofNanos(System.nanoTime() - start), r.state().tensorBytes());
                if (!skipped.isEmpty()) {
                    LOG.warn("restored {} from {} after skipping {} newer: {}", c.id(), r.location(), skipped.size(),
                            skipped);
                } else {
                    LOG.info("restored {} from {}", c.id(), r.location());
                }
                return Optional.of(r);
            } catch (CorruptCheckpointException e) {
                LOG.warn("checkpoint {} is corrupt, trying an older one: {}", c.id(), e.getMessage());
                skipped.add(e.getMessage());
            } catch (IOException | RuntimeException e) {
                String line = c.id() + " in " + c.store().describe() + ": cannot read: " + FileSync.reason(e);
                LOG.warn("{}", line);
                skipped.add(line);
            }
        }
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        throw new CheckpointException("no valid checkpoint: all " + candidates.size()
                + " found failed verification: " + String.join("; ", skipped));
    }

    /** See {@link Checkpointer#restore(CheckpointId)}. */
    RestoredCheckpoint restore(CheckpointId id) {
        List<String> problems = new ArrayList<>();
        for (CheckpointStore store : readOrder) {
            try {
                if (store.list().contains(id)) {
                    return read(store, id, List.of());
                }
            } catch (CorruptCheckpointException e) {
                problems.add(e.getMessage());
            } catch (IOException | RuntimeException e) {
                problems.add(store.describe() + ": " + FileSync.reason(e));
            }
        }
        throw new CheckpointException("checkpoint " + id + " cannot be restored: "
                + (problems.isEmpty() ? "no store has it" : String.join("; ", problems)));
    }

    /** See {@link Checkpointer#list()}. */
    List<CheckpointId> list() {
        TreeSet<CheckpointId> ids = new TreeSet<>(Comparator.reverseOrder());
        for (CheckpointStore store : readOrder) {
            try {
                ids.addAll(store.list());
            } catch (IOException e) {
                throw new CheckpointException("cannot list " + store.describe() + ": " + FileSync.reason(e), e);
            }
        }
        return new ArrayList<>(ids);
    }

    /**
     * Verifies checkpoint {@code id} of {@code store} (manifest and every tensor's CRC32C) and rebuilds its state.
     *
     * @param skipped the newer checkpoints passed over on the way here, reported with the result
     * @throws CorruptCheckpointException if it does not verify
     */
    private RestoredCheckpoint read(CheckpointStore store, CheckpointId id, List<String> skipped) throws IOException {
        try (StoredCheckpoint sc = store.open(id)) {
            CheckpointReader.Verified v = CheckpointReader.verify(sc);
            v.throwIfCorrupt();
            Manifest m = v.manifest();
            CheckpointState.Builder b = CheckpointState.builder(m.id().step()).epoch(m.epoch())
                    .generation(m.id().generation()).worldSize(m.worldSize()).metadataJson(m.metadataJson());
            for (int i = 0; i < m.tensors().size(); i++) {
                TensorEntry t = m.tensors().get(i);
                ByteBuffer data = v.data().get(i);
                if (copyOnRestore) {
                    data = ByteBuffer.allocateDirect(data.remaining()).order(ByteOrder.LITTLE_ENDIAN).put(data.duplicate()).flip();
                }
                b.tensor(t.name(), Tensor.wrap(t.dtype(), data, t.shape()));
            }
            m.scalars().forEach((name, value) -> {
                if (value instanceof Long l) {
                    b.scalar(name, l.longValue());
                } else if (value instanceof Double d) {
                    b.scalar(name, d.doubleValue());
                } else {
                    b.scalar(name, (String) value);
                }
            });
            return new RestoredCheckpoint(b.build(), m.job(), m.createdAt(), store.describe(), sc.location(), skipped);
        }
    }

    /** A checkpoint some store lists; {@code order} is the store's place in the read order, to break ties. */
    private record Candidate(CheckpointId id, int order, CheckpointStore store) {
    }
}
