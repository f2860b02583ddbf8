package dev.kolo.checkpoint;

import com.hazelcast.core.HazelcastInstance;
import dev.kolo.checkpoint.internal.AsyncSaver;
import dev.kolo.checkpoint.internal.CheckpointMetrics;
import dev.kolo.checkpoint.internal.store.ClusterReplicaStore;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.internal.access.ProgressNotes;
import dev.kolo.runtime.internal.access.WorkerRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

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
 *
 * <p>This class is the API and drives the save; the stores and their writing are {@link CheckpointStores},
 * the restore is {@link CheckpointRestorer}.
 */
public final class Checkpointer implements AutoCloseable {
    private final String job;
    private final boolean writer;
    private final InFlightPolicy policy;
    private final Duration saveTimeout;
    private final CheckpointStores stores;
    private final CheckpointRestorer restorer;
    private final AsyncSaver saver;
    private final CheckpointMetrics metrics;
    /** The worker whose status page shows each saved checkpoint, or null. */
    private final ProgressNotes progress;

    private Checkpointer(Builder b, CheckpointStores stores) {
        this.job = b.job;
        this.writer = b.writer;
        this.policy = b.policy;
        this.saveTimeout = b.saveTimeout;
        this.stores = stores;
        this.saver = new AsyncSaver("kolo-checkpoint-writer-" + job, saveTimeout);
        this.metrics = b.registry == null ? CheckpointMetrics.NONE : new CheckpointMetrics(b.registry);
        this.restorer = new CheckpointRestorer(stores.readOrder, b.copyOnRestore, metrics);
        this.progress = b.progress;
    }

    private void saved(SaveResult r) {
        metrics.saved(r);
        if (progress != null && r.saved()) {
            progress.checkpointed(r.id().step(), String.join(", ", r.stores()));
        }
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
                        stores::writeAll, () -> stores.retain(id))
                .orElseGet(() -> CompletableFuture.completedFuture(
                        SaveResult.skipped(SaveResult.Status.SKIPPED_IN_FLIGHT, id)));
        return f.whenComplete((r, e) -> {
            if (e != null) {
                metrics.saveFailed();
            } else {
                saved(r);
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
                SaveResult r = stores.writeAll(image, start, System.nanoTime() - start);
                saved(r);
                return r;
            } catch (RuntimeException e) {
                metrics.saveFailed();
                throw e;
            } finally {
                saver.background(() -> stores.retain(state.id()));
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
        return restorer.restoreLatest(accept);
    }

    /**
     * Restores exactly checkpoint {@code id}, from the first store that has it and verifies.
     *
     * @throws CheckpointException if no store has a valid copy
     */
    public RestoredCheckpoint restore(CheckpointId id) {
        return restorer.restore(id);
    }

    /** @return the ids committed in any store, newest first, without duplicates */
    public List<CheckpointId> list() {
        return restorer.list();
    }

    /** @return whether this worker writes checkpoints */
    public boolean writer() {
        return writer;
    }

    /** @return the stores, in the order saves write them */
    public List<CheckpointStore> stores() {
        return stores.writeOrder;
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
        private ProgressNotes progress;

        private Builder() {
        }

        /** Shows each checkpoint saved (its step and stores) on {@code kolo}'s status page. */
        public Builder statusOf(Kolo kolo) {
            this.progress = WorkerRegistry.of(kolo).progress();
            return this;
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
            return new Checkpointer(this, CheckpointStores.assemble(directory, replica, extraStores, keep, replicaKeep,
                    writer));
        }

        /** @return the directory named by {@code -Dkolo.checkpoint.dir} or {@code KOLO_CHECKPOINT_DIR}, if set */
        public static Optional<Path> defaultDirectory() {
            return CheckpointSettings.CHECKPOINT_DIR.fromEnvironment();
        }
    }
}
