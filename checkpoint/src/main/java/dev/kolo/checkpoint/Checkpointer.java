package dev.kolo.checkpoint;

import com.hazelcast.core.HazelcastInstance;
import dev.kolo.checkpoint.internal.AsyncSaver;
import dev.kolo.checkpoint.internal.CheckpointMetrics;
import dev.kolo.checkpoint.internal.Retention;
import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import dev.kolo.checkpoint.internal.store.ClusterReplicaStore;
import dev.kolo.checkpoint.internal.store.FileSync;
import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.access.WorkerRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saves and restores checkpoints of a training job: durable, atomic, verified and asynchronous, to a
 * local directory and optionally to an in-memory replica in the cluster.
 *
 * <pre>{@code
 * try (Checkpointer ckpt = Checkpointer.builder()
 *         .job("mnist").directory(Path.of("/data/ckpt"))
 *         .replica(kolo)                      // optional: peers keep the latest state in memory
 *         .rank(kolo.rank())                  // only rank 0 writes; replicas are identical
 *         .build()) {
 *     ckpt.restoreLatest().ifPresent(r -> model.load(r.state()));
 *     for (long step = ...; ; step++) {
 *         train();
 *         if (step % 100 == 0) {
 *             ckpt.save(model.state(step));   // returns after a memory copy; written in the background
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #save} copies the state into an off-heap staging buffer (reused between saves) and returns
 * a future; a background thread writes it to every store while training goes on. At most one save is in
 * flight; the {@link InFlightPolicy} says whether the next waits or is skipped. A failed save completes
 * its future with a {@link CheckpointException} and never damages earlier checkpoints.
 *
 * <p>{@link #restoreLatest} verifies the manifest and every tensor's CRC32C, and falls back to the newest
 * checkpoint that verifies, reporting each one it skipped. Thread-safe.
 */
public final class Checkpointer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Checkpointer.class);

    private final String job;
    private final boolean writer;
    private final InFlightPolicy policy;
    private final Duration saveTimeout;
    private final boolean copyOnRestore;
    /** Stores in write order: the durable ones first. */
    private final List<CheckpointStore> stores;
    /** Stores in restore preference order for equal ids: the in-memory replica first. */
    private final List<CheckpointStore> readOrder;
    /** How many checkpoints each store of {@link #stores} keeps, by index. */
    private final List<Integer> keep;
    private final AsyncSaver saver;
    private final CheckpointMetrics metrics;

    private Checkpointer(Builder b, List<CheckpointStore> stores, List<CheckpointStore> readOrder,
            List<Integer> keep) {
        this.job = b.job;
        this.writer = b.writer;
        this.policy = b.policy;
        this.saveTimeout = b.saveTimeout;
        this.copyOnRestore = b.copyOnRestore;
        this.stores = List.copyOf(stores);
        this.readOrder = List.copyOf(readOrder);
        this.keep = List.copyOf(keep);
        this.saver = new AsyncSaver("kolo-checkpoint-writer-" + job, saveTimeout);
        this.metrics = b.registry == null ? CheckpointMetrics.NONE : new CheckpointMetrics(b.registry);
    }

    /** @return a builder; a directory, a replica or a store must be given (or {@code KOLO_CHECKPOINT_DIR} set) */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Saves {@code state} asynchronously: copies its tensors into the staging buffer, then returns while a
     * background thread writes and commits the copy to every store. The caller may modify its tensors as
     * soon as this returns.
     *
     * @return completes with the result once committed everywhere (or at once if skipped); completes
     *     exceptionally with a {@link CheckpointException} naming the store, file and cause if any store
     *     failed
     * @throws CheckpointException if the policy is {@link InFlightPolicy#WAIT} and the previous save is
     *     still running after the save timeout
     */
    public CompletableFuture<SaveResult> save(CheckpointState state) {
        Objects.requireNonNull(state, "state");
        if (!writer) {
            return CompletableFuture.completedFuture(SaveResult.skipped(SaveResult.Status.SKIPPED_NOT_WRITER, state.id()));
        }
        CheckpointId id = state.id();
        CompletableFuture<SaveResult> f = saver.save(state, policy, staged -> CheckpointImage.of(state, job, staged),
                        this::writeAll, () -> retain(id))
                .orElseGet(() -> CompletableFuture.completedFuture(
                        SaveResult.skipped(SaveResult.Status.SKIPPED_IN_FLIGHT, id)));
        return f.whenComplete((r, e) -> {
            if (e != null) {
                metrics.saveFailed();
            } else {
                metrics.saved(r);
            }
        });
    }

    /**
     * Saves {@code state} on the calling thread, reading its tensors in place (no staging copy); waits
     * first for an asynchronous save in flight.
     *
     * @throws CheckpointException if any store failed (earlier checkpoints are unaffected)
     */
    public SaveResult saveSync(CheckpointState state) {
        Objects.requireNonNull(state, "state");
        if (!writer) {
            return SaveResult.skipped(SaveResult.Status.SKIPPED_NOT_WRITER, state.id());
        }
        synchronized (saver) {
            saver.checkOpen();
            saver.awaitInFlight("cannot save " + state.id());
            long start = System.nanoTime();
            CheckpointImage image = CheckpointImage.ofTensors(state, job);
            try {
                SaveResult r = writeAll(image, start, System.nanoTime() - start);
                metrics.saved(r);
                return r;
            } catch (RuntimeException e) {
                metrics.saveFailed();
                throw e;
            } finally {
                saver.background(() -> retain(state.id()));
            }
        }
    }

    /** Waits until the save in flight, if any, has finished (successfully or not), up to the save timeout. */
    public void awaitSaves() {
        saver.awaitInFlight("waiting for saves");
    }

    /**
     * Restores the newest checkpoint, over all stores, that passes verification. Corrupt or unreadable
     * newer ones are skipped, logged and listed in {@link RestoredCheckpoint#skipped()}.
     *
     * @return empty if no store holds any checkpoint
     * @throws CheckpointException if checkpoints exist but none verifies (the message lists why each failed)
     */
    public Optional<RestoredCheckpoint> restoreLatest() {
        return restoreLatest(id -> true);
    }

    /**
     * Like {@link #restoreLatest()}, considering only checkpoints whose id {@code accept} accepts (e.g.
     * {@code id -> id.generation() <= current}, to ignore a fenced writer's).
     */
    public Optional<RestoredCheckpoint> restoreLatest(Predicate<CheckpointId> accept) {
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

    /**
     * Restores exactly checkpoint {@code id}, from the first store that has it and verifies.
     *
     * @throws CheckpointException if no store has a valid copy
     */
    public RestoredCheckpoint restore(CheckpointId id) {
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

    /** @return the ids committed in any store, newest first, without duplicates */
    public List<CheckpointId> list() {
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

    /** @return whether this worker writes checkpoints */
    public boolean writer() {
        return writer;
    }

    /** @return the stores, in the order saves write them */
    public List<CheckpointStore> stores() {
        return stores;
    }

    /** @return the bytes of off-heap staging memory held for asynchronous saves */
    public long stagingBytes() {
        return saver.stagingCapacity();
    }

    /** Waits (up to the save timeout) for the save in flight, then stops the writer thread. */
    @Override
    public void close() {
        saver.close();
    }

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

    private SaveResult writeAll(CheckpointImage image, long startNanos, long blockingNanos) {
        List<String> saved = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        Throwable cause = null;
        for (CheckpointStore store : stores) {
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
    private void retain(CheckpointId justWritten) {
        for (int s = 0; s < stores.size(); s++) {
            for (String w : Retention.apply(stores.get(s), keep.get(s), justWritten)) {
                LOG.warn("checkpoint {}: {}", justWritten, w);
            }
        }
    }

    private record Candidate(CheckpointId id, int order, CheckpointStore store) {
    }

    /** Builds a {@link Checkpointer}. */
    public static final class Builder {
        private String job = "kolo";
        private Path directory;
        private java.util.function.Supplier<CheckpointStore> replica;
        private final List<CheckpointStore> extraStores = new ArrayList<>();
        private int keep = 3;
        private int replicaKeep = 2;
        private boolean writer = true;
        private InFlightPolicy policy = InFlightPolicy.WAIT;
        private Duration saveTimeout = Duration.ofMinutes(10);
        private boolean copyOnRestore;
        private io.micrometer.core.instrument.MeterRegistry registry;

        private Builder() {
        }

        /**
         * Records save and restore times and bytes ({@code kolo_checkpoint_*}) in {@code registry}, e.g.
         * {@code kolo.meterRegistry()}, so the worker's {@code /metrics} serves them.
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /** @param job the job name, recorded in manifests and naming the replica map (default {@code kolo}) */
        public Builder job(String job) {
            if (job == null || job.isBlank()) {
                throw new IllegalArgumentException("job name must be non-empty");
            }
            this.job = job;
            return this;
        }

        /** @param dir the local checkpoint directory (a PersistentVolume in Kubernetes) */
        public Builder directory(Path dir) {
            this.directory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * Keeps the latest committed checkpoints in memory in the worker's cluster as well, in the map
         * {@code kolo-checkpoints-<job>} with one synchronous backup, so a restarted or new worker restores
         * from its peers without touching disk.
         */
        public Builder replica(Kolo kolo) {
            HazelcastInstance member = WorkerRegistry.of(kolo).hazelcast();
            this.replica = () -> new ClusterReplicaStore(member, ClusterReplicaStore.mapNameFor(job));
            return this;
        }

        /**
         * Uses {@code store} as the in-memory replica: read before the directory, keeping
         * {@link #replicaKeep(int)} checkpoints.
         */
        public Builder replicaStore(CheckpointStore store) {
            Objects.requireNonNull(store, "store");
            this.replica = () -> store;
            return this;
        }

        /** Adds another store (e.g. an object store), written after the directory and the replica. */
        public Builder store(CheckpointStore store) {
            extraStores.add(Objects.requireNonNull(store, "store"));
            return this;
        }

        /** @param keep how many checkpoints the directory (and extra stores) keep, {@code >= 1} (default 3) */
        public Builder keep(int keep) {
            if (keep < 1) {
                throw new IllegalArgumentException("keep must be >= 1, got " + keep);
            }
            this.keep = keep;
            return this;
        }

        /** @param keep how many checkpoints the cluster replica keeps, {@code >= 1} (default 2) */
        public Builder replicaKeep(int keep) {
            if (keep < 1) {
                throw new IllegalArgumentException("replicaKeep must be >= 1, got " + keep);
            }
            this.replicaKeep = keep;
            return this;
        }

        /**
         * @param writer whether this worker writes checkpoints; by policy only one worker (rank 0) does,
         *     since data-parallel replicas are identical (default true, for a single process)
         */
        public Builder writer(boolean writer) {
            this.writer = writer;
            return this;
        }

        /** The default writer policy: this worker writes if and only if {@code rank == 0}. */
        public Builder rank(int rank) {
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0, got " + rank);
            }
            this.writer = rank == 0;
            return this;
        }

        /** @param policy what a save does while the previous one is in flight (default {@link InFlightPolicy#WAIT}) */
        public Builder inFlightPolicy(InFlightPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** @param timeout the longest any wait for a save in flight lasts (default 10 minutes) */
        public Builder saveTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("save timeout must be positive");
            }
            this.saveTimeout = timeout;
            return this;
        }

        /**
         * @param copy true to restore tensors into fresh off-heap memory; false (default) to map the data
         *     file read-only, zero-copy
         */
        public Builder copyOnRestore(boolean copy) {
            this.copyOnRestore = copy;
            return this;
        }

        /**
         * @return the checkpointer; if it is the writer, leftovers of an interrupted write in the directory
         *     are removed first
         * @throws IllegalStateException if no store is configured and {@code KOLO_CHECKPOINT_DIR} is unset
         */
        public Checkpointer build() {
            List<CheckpointStore> stores = new ArrayList<>();
            List<CheckpointStore> readOrder = new ArrayList<>();
            List<Integer> keeps = new ArrayList<>();
            Path dir = directory;
            if (dir == null && replica == null && extraStores.isEmpty()) {
                dir = defaultDirectory().orElseThrow(() -> new IllegalStateException("no checkpoint store: call "
                        + "directory(Path) or set KOLO_CHECKPOINT_DIR (or -Dkolo.checkpoint.dir)"));
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
            for (CheckpointStore s : extraStores) {
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
            return new Checkpointer(this, stores, readOrder, keeps);
        }

        /** @return the directory named by {@code -Dkolo.checkpoint.dir} or {@code KOLO_CHECKPOINT_DIR}, if set */
        public static Optional<Path> defaultDirectory() {
            return CheckpointSettings.CHECKPOINT_DIR.fromEnvironment();
        }
    }
}
