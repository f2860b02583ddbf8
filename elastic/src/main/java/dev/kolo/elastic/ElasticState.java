package dev.kolo.elastic;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.checkpoint.RestoredCheckpoint;
import dev.kolo.elastic.internal.StateRegistry;
import dev.kolo.elastic.internal.StepAgreement;
import dev.kolo.elastic.internal.WorkerIdentity;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.internal.access.WorkerRegistry;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.UpdateRule;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The training state an elastic job keeps consistent across failures and membership changes: named
 * tensors (parameters, optimizer state), registered as the live arrays or buffers the model updates, and
 * named values (epoch, batch, sampler position, RNG seed).
 *
 * <pre>{@code
 * try (Kolo kolo = Kolo.init();
 *      ElasticState state = ElasticState.builder(kolo).checkpointEvery(10).build()) {
 *     for (Parameter p : model.parameters()) state.floats(p.name(), p.values(), p.shape());
 *     state.value("epoch", 0L).value("batch", 0L);
 *     state.onReset(e -> lr = baseLr * e.size());
 *     Elastic.run(kolo, state, s -> {
 *         for (long b = s.longValue("batch"); b < batches(kolo.size()); b++) {
 *             trainStep(b);
 *             s.set("batch", b + 1);
 *             if (b % 5 == 0) s.commit();
 *         }
 *         return model.checksum();
 *     });
 * }
 * }</pre>
 *
 * <p>{@link #commit()} copies the state off-heap (cheap: one memory copy; do it every few steps) and
 * every {@code checkpointEvery} commits hands it to the checkpoint store; {@link #restore()} returns the
 * live state to the last commit; {@link #sync()} makes every rank hold the same bytes. Used by one
 * training thread; {@link #requestLeave()} may be called from any thread.
 *
 * <p>This class is the API and the agreement between ranks; it delegates the registered live state to a
 * {@link StateRegistry} and the committed state (snapshot, commit count, checkpoints) to a
 * {@link CommittedState}.
 */
public final class ElasticState implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ElasticState.class);

    private final Kolo kolo;
    private final StateRegistry live = new StateRegistry();
    private final CommittedState committed;
    private final List<ResetCallback> callbacks = new ArrayList<>();
    final int resetLimit;
    final boolean leaveOnSigterm;
    final Duration leaveTimeout;
    private final String workerId;
    final Blacklist.Policy blacklistPolicy;
    final ElasticMetrics metrics;
    private final AtomicBoolean leaveRequested = new AtomicBoolean();
    /** The fixed job's agreement at step boundaries ({@link #stepDone()}); drained by {@link ElasticRun}. */
    final StepAgreement steps = new StepAgreement();
    private List<String> workerIds = List.of();

    private ElasticState(Builder b, CheckpointLink checkpoints) {
        this.kolo = b.kolo;
        this.committed = new CommittedState(kolo, live, checkpoints, b.checkpointEvery);
        this.resetLimit = b.resetLimit;
        this.leaveOnSigterm = b.leaveOnSigterm;
        this.leaveTimeout = b.leaveTimeout;
        this.workerId = b.workerId != null ? b.workerId
                : WorkerIdentity.defaultId(kolo, ElasticSettings.WORKER_ID.fromEnvironment());
        this.blacklistPolicy = b.policy;
        this.metrics = new ElasticMetrics(kolo.meterRegistry());
    }

    /** @return a builder for the state of the job {@code kolo} belongs to */
    public static Builder builder(Kolo kolo) {
        return new Builder(Objects.requireNonNull(kolo, "kolo"));
    }

    // ------------------------------------------------------------------ registration

    /** Registers a FLOAT32 tensor held in {@code values} (e.g. a {@link Parameter}'s values or an optimizer's moments). */
    public ElasticState floats(String name, float[] values, long... shape) {
        live.floats(name, values, shape);
        return this;
    }

    /** Registers a FLOAT64 tensor held in {@code values}. */
    public ElasticState doubles(String name, double[] values, long... shape) {
        live.doubles(name, values, shape);
        return this;
    }

    /** Registers an INT32 tensor held in {@code values}. */
    public ElasticState ints(String name, int[] values, long... shape) {
        live.ints(name, values, shape);
        return this;
    }

    /** Registers an INT64 tensor held in {@code values}. */
    public ElasticState longs(String name, long[] values, long... shape) {
        live.longs(name, values, shape);
        return this;
    }

    /**
     * Registers a tensor held in a writable buffer (little-endian bytes from index 0), e.g. the direct
     * buffer a {@code Tensor.wrap(dtype, buffer, shape)} tensor reads; {@link #restore()} writes it.
     *
     * @param shape the tensor's shape; none means a vector filling the buffer
     */
    public ElasticState buffer(String name, DType dtype, ByteBuffer buffer, long... shape) {
        live.buffer(name, dtype, buffer, shape);
        return this;
    }

    /** Registers each parameter's values under its name. */
    public ElasticState parameters(List<Parameter> parameters) {
        live.parameters(parameters);
        return this;
    }

    /**
     * Registers every array of state {@code rule} keeps for {@code parameters} (the velocity of a
     * {@link dev.kolo.runtime.train.Sgd Sgd} with momentum, the moments and step counts of
     * {@link dev.kolo.runtime.train.Adam Adam}, {@link dev.kolo.runtime.train.AdamW AdamW} and
     * {@link dev.kolo.runtime.train.Lamb Lamb}) under the names the rule gives them (see
     * {@link UpdateRule#state}), creating it if no step was taken yet. With the parameters registered too, a
     * commit holds everything the next step depends on, and a restore takes the optimizer back to the committed
     * step along with the weights. A rule without state registers nothing.
     *
     * @throws IllegalArgumentException if a state name is already registered (two parameters sharing a name)
     */
    public ElasticState updateRule(UpdateRule rule, List<Parameter> parameters) {
        live.updateRule(rule, parameters);
        return this;
    }

    /** Registers a {@code long} value (epoch, batch, sampler position, seed) with its initial value. */
    public ElasticState value(String name, long initial) {
        live.value(name, initial);
        return this;
    }

    /** Registers a {@code double} value with its initial value. */
    public ElasticState value(String name, double initial) {
        live.value(name, initial);
        return this;
    }

    /** Registers a string value with its initial value. */
    public ElasticState value(String name, String initial) {
        live.value(name, Objects.requireNonNull(initial, "initial"));
        return this;
    }

    /** Adds a callback run on every rank after each reset (new size, rank, generation), in order of adding. */
    public ElasticState onReset(ResetCallback callback) {
        callbacks.add(Objects.requireNonNull(callback, "callback"));
        return this;
    }

    // ------------------------------------------------------------------ values

    /** @return the live {@code long} value {@code name} */
    public long longValue(String name) {
        return live.get(name, Long.class);
    }

    /** @return the live {@code double} value {@code name} */
    public double doubleValue(String name) {
        return live.get(name, Double.class);
    }

    /** @return the live string value {@code name} */
    public String stringValue(String name) {
        return live.get(name, String.class);
    }

    /** Sets the registered {@code long} value {@code name}; committed by the next {@link #commit()}. */
    public void set(String name, long v) {
        live.set(name, v);
    }

    /** Sets the registered {@code double} value {@code name}. */
    public void set(String name, double v) {
        live.set(name, v);
    }

    /** Sets the registered string value {@code name}. */
    public void set(String name, String v) {
        live.set(name, Objects.requireNonNull(v, "value"));
    }

    // ------------------------------------------------------------------ commit, restore, sync

    /**
     * Commits the live state: in an elastic job the ranks first agree (a tiny allreduce) whether the
     * membership changes here; then the tensors and values are copied off-heap, and every
     * {@code checkpointEvery}-th commit the current rank 0 hands them to the checkpoint store (which
     * copies them and writes in the background, stamped with the generation). Call it on every rank at
     * the same point of training.
     *
     * @throws MembershipChangedException on every rank at once when workers join or one leaves here
     *     (after the state is committed: nothing rolls back); {@link Elastic#run} handles it
     * @throws dev.kolo.runtime.WorkerLostException if a worker is lost during the agreement (nothing is
     *     committed); {@link Elastic#run} handles it
     */
    public void commit() {
        live.freeze();
        CommitAgreement agreed = CommitAgreement.reach(kolo, leaveRequested);
        long start = System.nanoTime();
        committed.commit();
        metrics.committed(System.nanoTime() - start);
        WorkerRegistry.of(kolo).progress().committed();
        if (agreed.changes()) {
            throw agreed.changed(kolo, committed.commits(), leaveRequested.get());
        }
    }

    /**
     * Marks the end of a training step: call it on every rank after each step, once the step's update and position
     * are in the live state ({@code KoloTrainer.step()} does). In a fixed job this is where a stop asked for by
     * {@link #requestLeave()} takes effect (the SIGTERM of a preemption or a drain, on any rank): the ranks agree on
     * it at a step boundary (at the latest the second after the request; the agreement is a tiny allreduce that
     * overlaps the next step), commit that step, rank 0 writes it as a checkpoint and waits for it, and every rank
     * throws. Started again, the job resumes from that very step. In an elastic job it does nothing: a worker asked
     * to leave leaves at its next {@link #commit()}, and the others go on.
     *
     * @throws ElasticJobFailedException on every rank at the same step when the job stopped as asked
     *     ({@link ElasticJobFailedException#stopped()}: exit with {@link ElasticJobFailedException#STOPPED_STATUS})
     * @throws dev.kolo.runtime.WorkerLostException if a worker is lost meanwhile; {@link Elastic#run} handles it
     */
    public void stepDone() {
        if (kolo.config().elastic()) {
            return;
        }
        int askedBy = steps.atBoundary(kolo, leaveRequested.get());
        if (askedBy >= 0) {
            commit();
            throw committed.stopHere(askedBy);
        }
    }

    /** Returns the live tensors and values to the last commit (or the last sync, if that came later). */
    public void restore() {
        committed.restore();
    }

    /**
     * Makes every rank hold the same state: the ranks exchange what they hold and the rank with the
     * newest commit (the new rank 0 after a recovery) broadcasts its committed tensors and values. If no
     * rank holds any state yet (a fresh start, or every worker restarted), each first reads the newest
     * valid checkpoint, if a store is configured, and the newest found wins. Afterwards the state counts
     * as committed (a {@link #restore()} returns here). Collective: every rank calls it.
     *
     * @throws IllegalStateException if ranks registered different tensors or values
     */
    public void sync() {
        live.freeze();
        StateSync.Outcome o = StateSync.run(kolo, this);
        workerIds = o.workerIds();
        if (o.fromCheckpoint()) {
            LOG.info("rank {}: read commit {} from the newest checkpoint", kolo.rank(), o.commit());
        }
        LOG.debug("rank {}: synchronized at commit {} from rank {}", kolo.rank(), o.commit(), o.root());
    }

    /**
     * Reads the newest valid checkpoint (from the in-memory replica or the directory) into the live state,
     * on this rank only; {@link Elastic#run} does this by itself when no rank holds state at its start.
     *
     * @return the checkpoint restored, or empty if there is none (or no store is configured)
     * @throws IllegalStateException if the checkpoint does not hold what this state registered
     */
    public Optional<CheckpointId> restoreLatest() {
        live.freeze();
        return committed.restoreLatest();
    }

    /**
     * Asks to leave the job at the next commit, without rollback for anyone (elastic job), or to stop the job at
     * the next step boundary with that step checkpointed (fixed job: see {@link #stepDone()}); e.g. from a SIGTERM
     * hook, which {@link Elastic#run} installs unless disabled. Thread-safe.
     */
    public void requestLeave() {
        leaveRequested.set(true);
        kolo.requestLeave();
    }

    /** @return the number of commits so far (restored with the state; the step number of its checkpoints) */
    public long commits() {
        return committed.commits();
    }

    /** @return the worker this state belongs to */
    public Kolo kolo() {
        return kolo;
    }

    /** @return this worker's stable id for the blacklist (a pod name, a host) */
    public String workerId() {
        return workerId;
    }

    /** @return the number of checkpoints this worker handed to the store that were written */
    public long checkpointsSaved() {
        return committed.checkpointsSaved();
    }

    /**
     * Ends training's checkpoints: waits for a save in flight and, when the store does not hold the last commit
     * (it was not due, or it was skipped because the previous save was still being written: saves never block
     * a step), writes it now and waits. Call once training is over: the store then holds the final state,
     * whatever {@code checkpointEvery} is. A no-op on ranks that do not write.
     */
    public void finishCheckpoints() {
        committed.finishCheckpoints();
    }

    /** Waits for a checkpoint being written, if any (bounded by the save timeout). */
    public void awaitCheckpoints() {
        committed.awaitCheckpoints();
    }

    /** Waits for a checkpoint being written, then closes the checkpoint stores this state opened. */
    @Override
    public void close() {
        committed.close();
    }

    // ------------------------------------------------------------------ package-private, for Elastic and sync

    /** @return the registered live tensors and values */
    StateRegistry live() {
        return live;
    }

    /** @return the committed state: snapshot, commit count, checkpoints */
    CommittedState committed() {
        return committed;
    }

    List<String> workerIds() {
        return workerIds;
    }

    List<ResetCallback> callbacks() {
        return callbacks;
    }

    /** @return true if a checkpoint was read into the snapshot */
    boolean restoreFromCheckpoint() {
        Optional<RestoredCheckpoint> r = committed.restoreFromCheckpoint();
        r.ifPresent(c -> LOG.info("rank {}: found checkpoint {} in {}", kolo.rank(), c.id(), c.location()));
        return r.isPresent();
    }

    boolean leaveRequested() {
        return leaveRequested.get();
    }

    String newestCheckpoint() {
        return committed.newestCheckpoint();
    }

    void closeCheckpoints() {
        close();
    }

    /** Builds an {@link ElasticState}. */
    public static final class Builder {
        private final Kolo kolo;
        private int checkpointEvery = 10;
        private Checkpointer checkpointer;
        private Path directory;
        private Boolean replica;
        private int resetLimit = Integer.MAX_VALUE;
        private boolean leaveOnSigterm = true;
        private Duration leaveTimeout = Duration.ofSeconds(25);
        private String workerId;
        private Blacklist.Policy policy = Blacklist.Policy.DEFAULT;

        private Builder(Kolo kolo) {
            this.kolo = kolo;
        }

        /** @param m hand every m-th commit to the checkpoint store ({@code >= 1}; default 10) */
        public Builder checkpointEvery(int m) {
            if (m < 1) {
                throw new IllegalArgumentException("checkpointEvery must be >= 1, got " + m);
            }
            this.checkpointEvery = m;
            return this;
        }

        /** Uses this checkpointer for saves and restores (the state does not close it). */
        public Builder checkpointer(Checkpointer c) {
            this.checkpointer = Objects.requireNonNull(c, "checkpointer");
            return this;
        }

        /**
         * @param dir the checkpoint directory; default {@code KOLO_CHECKPOINT_DIR} (or
         *     {@code -Dkolo.checkpoint.dir}); with neither, no durable checkpoints are written
         */
        public Builder checkpointDirectory(Path dir) {
            this.directory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * @param on keep the newest checkpoints in memory in the cluster too, so a restarted or new worker
         *     reads them from its peers (default: on in an elastic job with a checkpoint directory)
         */
        public Builder replica(boolean on) {
            this.replica = on;
            return this;
        }

        /** @param limit the most resets (recoveries and membership changes) a run survives; default unlimited */
        public Builder resetLimit(int limit) {
            if (limit < 0) {
                throw new IllegalArgumentException("resetLimit must be >= 0, got " + limit);
            }
            this.resetLimit = limit;
            return this;
        }

        /**
         * @param on on SIGTERM, leave at the next commit (others go on without rollback) before the JVM
         *     exits, waiting at most {@code timeout} (default on, 25 s: within Kubernetes' default grace)
         */
        public Builder leaveOnSigterm(boolean on, Duration timeout) {
            this.leaveOnSigterm = on;
            this.leaveTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** @param id this worker's stable id for the blacklist; default {@code KOLO_WORKER_ID}, the pod name, or host:pid */
        public Builder workerId(String id) {
            this.workerId = StateRegistry.checkName(id);
            return this;
        }

        /**
         * The blacklist: a lost worker's first failure costs nothing; each further one within {@code window}
         * makes it wait {@code baseCooldown}, doubling, at most {@code maxCooldown}, before it is admitted
         * again; after {@code maxFailures} it is refused. Defaults 10, 5 s, 5 min, 30 min.
         */
        public Builder blacklist(int maxFailures, Duration baseCooldown, Duration maxCooldown, Duration window) {
            if (maxFailures < 1) {
                throw new IllegalArgumentException("maxFailures must be >= 1, got " + maxFailures);
            }
            this.policy = new Blacklist.Policy(maxFailures, baseCooldown, maxCooldown, window);
            return this;
        }

        /** @return the state; register tensors and values on it before {@link Elastic#run} */
        public ElasticState build() {
            return new ElasticState(this, CheckpointLink.open(kolo, checkpointer, directory, replica));
        }
    }
}
