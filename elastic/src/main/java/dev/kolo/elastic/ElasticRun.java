package dev.kolo.elastic;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.access.Departure;
import dev.kolo.runtime.internal.access.WorkerRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One {@link Elastic#run}: sync, train, and on a failure or a change restore, regroup, sync, retry. */
final class ElasticRun<R> {
    private static final Logger LOG = LoggerFactory.getLogger(ElasticRun.class);
    /** How often a stopping fixed job looks whether the cluster has noticed which worker is gone. */
    private static final long DEPARTURE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Kolo kolo;
    private final ElasticState state;
    private final Function<ElasticState, R> trainFn;
    private final boolean elastic;
    private long rejoinedAt;

    ElasticRun(Kolo kolo, ElasticState state, Function<ElasticState, R> trainFn) {
        this.kolo = kolo;
        this.state = state;
        this.trainFn = trainFn;
        this.elastic = kolo.config().elastic();
    }

    /** The shutdown hook of this run, or null; held past the run's end when {@link #holdHook} asks so. */
    private SigtermLeave hook;
    private boolean holdHook;

    /**
     * Keeps the shutdown hook waiting when the run ends, until {@link #exit} or {@link #releaseHook}: a JVM that is
     * shutting down exits as soon as its hooks return, with the signal's status, before the caller could exit with
     * the run's own.
     */
    ElasticRun<R> holdHook() {
        this.holdHook = true;
        return this;
    }

    R run() {
        Blacklist blacklist = elastic
                ? new Blacklist(WorkerRegistry.of(kolo).hazelcast(), kolo.config().get(Settings.JOB), state.blacklistPolicy)
                : null;
        if (blacklist != null) {
            Optional<String> refused = blacklist.refusal(state.workerId(), System.currentTimeMillis());
            if (refused.isPresent()) {
                throw new ElasticJobFailedException(refused.get(), null);
            }
        }
        hook = state.leaveOnSigterm ? new SigtermLeave(state, state.leaveTimeout, elastic) : null;
        try {
            return loop(blacklist);
        } finally {
            if (!holdHook) {
                releaseHook();
            }
        }
    }

    /** The run is over and its caller goes on (or exits by itself): the hook returns, or is removed. */
    void releaseHook() {
        if (hook != null) {
            hook.close();
        }
    }

    /**
     * Ends the process with {@code status}. While the JVM shuts down (the hook was triggered), {@code System.exit}
     * would block and the JVM would exit with the signal's status once the hook returned: it halts with
     * {@code status} instead, its output flushed, its hook still waiting.
     */
    void exit(int status) {
        if (hook != null && hook.triggered()) {
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }
        releaseHook(); // else System.exit would run the hook, which would wait for a run that is over
        System.exit(status);
    }

    private R loop(Blacklist blacklist) {
        int resets = 0;
        ResetEvent.Reason reason = null;
        boolean rolledBack = false;
        long failedAt = 0;
        int previousSize = kolo.size();
        List<String> previousIds = List.of();
        while (true) {
            try {
                state.sync();
                if (reason != null) {
                    afterReset(blacklist, reason, rolledBack, failedAt, previousSize, previousIds);
                }
                previousSize = kolo.size();
                previousIds = state.workerIds();
                R result = trainFn.apply(state);
                state.steps.drain(); // every rank took as many steps: each completes the agreement in flight
                return result;
            } catch (RuntimeException thrown) {
                state.steps.forget(); // it fails with the run, or was the stop: nobody waits for it
                RuntimeException e = Waits.unwrap(thrown);
                failedAt = System.nanoTime();
                if (e instanceof MembershipChangedException mc) {
                    if (mc.selfLeaving()) {
                        throw leave();
                    }
                    reason = ResetEvent.Reason.MEMBERSHIP_CHANGED;
                    rolledBack = false;
                    LOG.info("rank {}: {}; regrouping", kolo.rank(), mc.getMessage());
                } else if (e instanceof WorkerLostException lost) {
                    if (!elastic) {
                        throw fixedJobStops(lost);
                    }
                    if (state.leaveRequested()) {
                        throw leave(); // leaving anyway: no need to regroup first
                    }
                    state.restore();
                    state.metrics.rolledBack();
                    reason = ResetEvent.Reason.WORKER_LOST;
                    rolledBack = true;
                    LOG.warn("rank {}: {}; rolled back to commit {}, regrouping", kolo.rank(), lost.getMessage(),
                            state.commits());
                } else {
                    throw e;
                }
                resets++;
                if (resets > state.resetLimit) {
                    throw new ElasticJobFailedException("reset limit reached: " + state.resetLimit + " resets (the last "
                            + "after: " + e.getMessage() + "); raise ElasticState.Builder.resetLimit", e);
                }
                rejoin(e);
            }
        }
    }

    private void rejoin(RuntimeException why) {
        try {
            kolo.rejoin();
            rejoinedAt = System.nanoTime();
        } catch (KoloException e) {
            throw new ElasticJobFailedException("the elastic job cannot go on after '" + why.getMessage() + "': "
                    + e.getMessage(), e);
        }
    }

    private void afterReset(Blacklist blacklist, ResetEvent.Reason reason, boolean rolledBack, long failedAt,
            int previousSize, List<String> previousIds) {
        long nanos = System.nanoTime() - failedAt;
        state.metrics.recovered(reason, nanos);
        if (reason == ResetEvent.Reason.WORKER_LOST && blacklist != null && kolo.rank() == 0) {
            List<String> departed = new java.util.ArrayList<>(previousIds);
            departed.removeAll(state.workerIds());
            if (!departed.isEmpty()) {
                long now = System.currentTimeMillis();
                // Off the training thread: a map write right after a member loss may wait for partition migration.
                Thread t = new Thread(() -> departed.forEach(id -> {
                    try {
                        blacklist.recordFailure(id, now);
                    } catch (RuntimeException e) {
                        LOG.warn("cannot record the failure of worker '{}': {}", id, e.toString());
                    }
                }), "kolo-elastic-blacklist");
                t.setDaemon(true);
                t.start();
            }
        }
        ResetEvent event = new ResetEvent(reason, previousSize, kolo.size(), kolo.rank(), kolo.generation(),
                state.commits(), rolledBack);
        LOG.info("rank {} of {} in generation {}: continuing from commit {} after {} ({} ms: regrouped in {} ms, "
                + "synchronized in {} ms)", kolo.rank(), kolo.size(), kolo.generation(), state.commits(), reason,
                nanos / 1_000_000, (rejoinedAt - failedAt) / 1_000_000, (System.nanoTime() - rejoinedAt) / 1_000_000);
        for (ResetCallback c : state.callbacks()) {
            c.onReset(event);
        }
    }

    private WorkerLeftException leave() {
        long commit = state.commits();
        state.closeCheckpoints();
        kolo.close();
        LOG.info("left the job at commit {}", commit);
        return new WorkerLeftException("left the job at commit " + commit + " as asked; the others go on");
    }

    private ElasticJobFailedException fixedJobStops(WorkerLostException lost) {
        return new ElasticJobFailedException(lostWorker(lost) + " was lost (" + lost.getMessage() + "); this job is not "
                + "elastic (KOLO_MIN_NP unset), so every worker stops. Start all " + kolo.config().get(Settings.NP) + " workers "
                + "again: they resume from the newest valid checkpoint (" + state.newestCheckpoint() + ")", lost);
    }

    /**
     * Names the worker that went first. The data plane reports the peer whose connection broke, but when a
     * worker dies its ring neighbours abort and close their own connections, so a survivor may hear of a
     * survivor first; the cluster's membership names the dead one once it notices (within the heartbeat
     * timeout). Without that confirmation in time, the data plane's peer is named and said to be unconfirmed.
     */
    private String lostWorker(WorkerLostException lost) {
        long deadline = System.nanoTime() + kolo.config().get(Settings.HEARTBEAT_TIMEOUT).plusSeconds(2).toNanos();
        List<Departure> departed = WorkerRegistry.of(kolo).departed();
        while (departed.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(DEPARTURE_POLL_NANOS);
            departed = WorkerRegistry.of(kolo).departed();
        }
        if (!departed.isEmpty()) {
            Departure first = departed.get(0);
            return "rank " + first.rank() + " (" + first.host() + ")";
        }
        return lost.lostRank() >= 0
                ? "rank " + lost.lostRank() + (lost.lostHost() != null ? " (" + lost.lostHost() + ")" : "")
                        + " (as its data connection reports: the cluster still lists every worker)"
                : "a worker";
    }
}
