package dev.kolo.elastic;

import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.checkpoint.InFlightPolicy;
import dev.kolo.checkpoint.RestoredCheckpoint;
import dev.kolo.elastic.internal.StateEntry;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connects an {@link ElasticState} to the checkpoint module: hands a commit to the store (only on the
 * current rank 0, stamped with the current generation, so a fenced writer's checkpoints are told apart)
 * and reads the newest valid checkpoint back into the snapshot.
 *
 * <p>Two checkpointers: a reader, built at once, that never touches the directory, and a writer built
 * the first time this worker writes (a writer removes leftovers of interrupted writes when built, which
 * must not race with another worker that is writing right now).
 */
final class CheckpointLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointLink.class);

    private final Checkpointer reader;
    private final Supplier<Checkpointer> writerFactory;
    private Checkpointer writer;
    private final boolean ownsCheckpointers;
    private boolean closed;
    final AtomicLong saved = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    /** The newest commit the store holds (written or restored from here), or -1. */
    final AtomicLong newestInStore = new AtomicLong(-1);
    /** The last save with its bookkeeping above, done once both are. */
    private volatile java.util.concurrent.CompletableFuture<?> lastSave =
            java.util.concurrent.CompletableFuture.completedFuture(null);

    CheckpointLink(Checkpointer reader, Supplier<Checkpointer> writerFactory, boolean ownsCheckpointers) {
        this.reader = reader;
        this.writerFactory = writerFactory;
        this.ownsCheckpointers = ownsCheckpointers;
    }

    /**
     * The link an {@link ElasticState.Builder} asked for: over the checkpointer it was given (used for reads
     * and writes, never closed here), or over a reader and a writer of its own for the directory (default
     * {@code KOLO_CHECKPOINT_DIR}) and the in-memory replica (default: on in an elastic job with a directory).
     * Here rather than in the builder because which checkpointers to build, and how, is this link's business.
     *
     * @param given the builder's checkpointer, or null
     * @param directory the builder's directory, or null for the default
     * @param replica the builder's replica choice, or null for the default
     * @return the link, or null when there is neither a checkpointer, a directory nor a replica
     */
    static CheckpointLink open(Kolo kolo, Checkpointer given, Path directory, Boolean replica) {
        if (given != null) {
            return new CheckpointLink(given, () -> given, false);
        }
        Path dir = directory != null ? directory : Checkpointer.Builder.defaultDirectory().orElse(null);
        boolean useReplica = replica != null ? replica : kolo.config().elastic() && dir != null;
        if (dir == null && !useReplica) {
            return null;
        }
        String job = kolo.config().get(Settings.JOB);
        return new CheckpointLink(checkpointers(kolo, job, dir, useReplica, false).build(),
                () -> checkpointers(kolo, job, dir, useReplica, true).build(), true);
    }

    /**
     * Saves never block a step (a save still in flight makes the next one skip) and a stuck store gives up
     * after a minute; only the writer removes leftovers of interrupted writes (see the class comment).
     */
    private static Checkpointer.Builder checkpointers(Kolo kolo, String job, Path dir, boolean useReplica,
            boolean writer) {
        Checkpointer.Builder b = Checkpointer.builder().job(job).writer(writer)
                .inFlightPolicy(InFlightPolicy.SKIP).saveTimeout(Duration.ofSeconds(60))
                .meterRegistry(kolo.meterRegistry()).statusOf(kolo);
        if (dir != null) {
            b.directory(dir);
        }
        if (useReplica) {
            b.replica(kolo);
        }
        return b;
    }

    /** Saves the snapshot asynchronously; returns once it is copied into the staging buffer. */
    void save(Snapshot snap, List<StateEntry> entries, long generation, int worldSize) {
        CheckpointState.Builder b = CheckpointState.builder(snap.commits()).generation(generation)
                .worldSize(worldSize).metadataJson("{\"writer\":\"kolo-elastic\"}");
        Object epoch = snap.values().get("epoch");
        if (epoch instanceof Long l && l >= 0) {
            b.epoch(l);
        }
        for (StateEntry e : entries) {
            b.tensor(e.name, Tensor.wrap(e.dtype, snap.buffer(e), e.shape));
        }
        snap.values().forEach((name, v) -> {
            if (v instanceof Long l) {
                b.scalar(name, l.longValue());
            } else if (v instanceof Double d) {
                b.scalar(name, d.doubleValue());
            } else {
                b.scalar(name, (String) v);
            }
        });
        if (writer == null) {
            writer = writerFactory.get();
        }
        long commit = snap.commits(); // the snapshot moves on with the next commit, before this save completes
        lastSave = writer.save(b.build()).whenComplete((r, e) -> {
            if (e != null) {
                failed.incrementAndGet();
                LOG.warn("checkpoint of commit {} failed (training goes on): {}", commit, e.getMessage());
            } else if (r.saved()) {
                saved.incrementAndGet();
                newestInStore.accumulateAndGet(commit, Math::max);
            }
        });
    }

    /** Waits for the save in flight, if any, and for its bookkeeping (bounded by the save timeout). */
    void awaitSaves() {
        if (writer != null) {
            writer.awaitSaves();
        }
        // The save is done, so this only waits for its completion callback to have run.
        lastSave.handle((r, e) -> null).join();
    }


    /**
     * Reads the newest checkpoint that verifies into the snapshot buffers.
     *
     * @return the restored checkpoint's values and commit, or empty if there is none
     * @throws IllegalStateException if it does not hold what the state registered
     */
    Optional<RestoredCheckpoint> restoreInto(Snapshot snap, List<StateEntry> entries, Map<String, Object> registered) {
        if (writer != null) {
            writer.awaitSaves();
        }
        Optional<RestoredCheckpoint> found = reader.restoreLatest();
        if (found.isEmpty()) {
            return found;
        }
        RestoredCheckpoint r = found.get();
        CheckpointState s = r.state();
        newestInStore.accumulateAndGet(s.step(), Math::max);
        for (StateEntry e : entries) {
            Tensor t = s.tensors().get(e.name);
            if (t == null) {
                throw new IllegalStateException("checkpoint " + r.id() + " (" + r.location() + ") has no tensor '"
                        + e.name + "'; it has " + s.tensors().keySet());
            }
            if (t.dtype() != e.dtype || !Arrays.equals(t.shape(), e.shape)) {
                throw new IllegalStateException("checkpoint " + r.id() + ": tensor '" + e.name + "' is " + t.dtype()
                        + Arrays.toString(t.shape()) + " but the state registered " + e.dtype
                        + Arrays.toString(e.shape));
            }
            ByteBuffer src = t.buffer();
            snap.buffer(e).put(src);
        }
        Map<String, Object> values = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, Object> v : registered.entrySet()) {
            Object stored = s.scalars().get(v.getKey());
            if (stored == null || stored.getClass() != v.getValue().getClass()) {
                throw new IllegalStateException("checkpoint " + r.id() + ": value '" + v.getKey() + "' is "
                        + (stored == null ? "missing" : "a " + stored.getClass().getSimpleName())
                        + " but the state registered a " + v.getValue().getClass().getSimpleName());
            }
            values.put(v.getKey(), stored);
        }
        snap.setValues(values, s.step());
        return found;
    }

    /** @return the newest checkpoint id any store holds, for messages */
    String newest() {
        try {
            var ids = reader.list();
            return ids.isEmpty() ? "none yet" : ids.get(0).name();
        } catch (RuntimeException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (writer != null) {
            writer.awaitSaves();
        }
        if (ownsCheckpointers) {
            if (writer != null) {
                writer.close();
            }
            reader.close();
        }
    }
}
