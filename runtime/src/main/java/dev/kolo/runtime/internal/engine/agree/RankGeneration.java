package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.CollectiveMismatchException;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.ControlChecks;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.execute.BatchExecutor;
import dev.kolo.runtime.internal.engine.execute.BatchOutcomes;
import dev.kolo.runtime.internal.engine.execute.CollectiveOps;
import dev.kolo.runtime.internal.engine.execute.EagerReduction;
import dev.kolo.runtime.internal.engine.op.OpGeneration;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.wiring.DataPlaneFactory;
import dev.kolo.runtime.internal.wiring.DataPlanes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One generation as this rank runs it: what the rank has submitted, how every rank agrees on what runs, and
 * the execution, in the same order on every rank. This class holds the generation's state and the order of
 * the steps; the steps are its parts: {@link AgreementRound} (the exchange among the ranks), {@link ResponseLog}
 * and {@link CoordinatorRequests} (the coordinator's side), {@link BatchExecutor} (running what was agreed), each
 * handed the facts it needs (this rank, the size, the tuning, where outcomes go), not this class.
 *
 * <p><b>Two paths to agreement.</b> A tensor whose spec is in the generation's {@link TensorCache} waits for
 * an <i>agreement round</i>: the ranks combine, over the data plane and in log2 n steps, the sets of cache ids
 * they have ready (and, for small allreduces, their data, reduced as it goes); the ids ready on every rank run at
 * once, in id order,
 * fused where they fit, and small ones are complete with the round itself. Anything else (a new tensor, a
 * changed spec, a rank that has joined, an op that is not cacheable) goes to the coordinator over the event
 * bus, which validates it against every rank's request and answers with numbered responses; a rank executes
 * response s only in a round where every rank reported holding it, so both paths interleave identically on
 * every rank. Every change of the cache happens during a round, at the same point on every rank, so the caches
 * stay identical and a rank never sends an id the others do not know: an entry a rank must drop (its name
 * resubmitted with another spec, or its tensor waiting too long) is marked invalid in a round, every rank drops
 * it, and every rank sends its waiting op of that id to the coordinator, whose validation and stall inspector
 * then see it as any other.
 *
 * <p>State is guarded by the engine lock (the drive stage's): whichever thread drives (the collective thread, or
 * a caller waiting for its own op) runs {@link #admit}, {@link #round} and the rest.
 */
public final class RankGeneration implements OpGeneration {
    private static final Logger LOG = LoggerFactory.getLogger(RankGeneration.class);
    /**
     * Longest a cached tensor waits in agreement rounds before it goes to the coordinator, whose stall
     * inspector then warns about it and fails it; a tenth of the stall warning time, so that the inspector's
     * clock is not late by much, and at most this.
     */
    static final long MAX_DEMOTE_AFTER_NANOS = 5_000_000_000L;

    public final long generation;
    /** The ranks this generation's ops run among: the whole generation, or a process set of it. */
    public final SetScope scope;
    /** This rank in {@link #scope}. */
    public final int rank;
    public final int size;
    public final Assignment assignment;
    public final WorkerInfo self;
    public volatile KoloException abortCause;
    public volatile DataPlane dataPlane;
    /** Ranks of this generation (of its set) that announced their close, told to the data plane once it is open. */
    public final java.util.Set<Integer> closingRanks = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final Observability observability;
    private final Completion completion;
    private final TensorCache cache;
    /** The tuned knobs in force (the job's settings unless {@code KOLO_AUTOTUNE} changed them). */
    private final Tuning tuning;
    private final long demoteAfterNanos;
    /**
     * Longest a coordinator response may sit on this rank while another rank reports not holding it: the same
     * bound as a data-plane op without progress (the control plane lost a message, the generation ends).
     */
    private final long responseAgreementNanos;
    private final WaitingTensors waiting = new WaitingTensors();
    /** Made with the data plane ({@link #open}): its combination rule reduces eager data with the kernels. */
    private AgreementRound round;
    private final ResponseLog responses = new ResponseLog();
    private final CoordinatorRequests requests;
    private BatchExecutor executor;
    /** Where the execution's outcomes go: to the callers, and an end of this generation through the completion. */
    private final BatchOutcomes outcomes = new BatchOutcomes() {
        @Override
        public void finish(PendingOp op, Tensor result, Throwable error) {
            completion.finish(op, result, error);
        }

        @Override
        public void endGeneration(KoloException cause) {
            completion.abort(RankGeneration.this, cause);
        }
    };

    private boolean joined;
    private CompletableFuture<Integer> joinResult;
    /** Some rank had joined in the last round: every tensor goes to the coordinator meanwhile. */
    private boolean anyJoined;
    /** Something this rank must tell the others in a round. */
    private boolean dirty;
    /** Tensors failed by the stall inspector before this rank submitted them: a late submit fails. */
    private final StalledNames stalled = new StalledNames();
    /** Cache ids dropped in the current round (invalid or evicted): their waiting ops go to the coordinator. */
    private final List<Integer> removed = new ArrayList<>();
    /** The agreed ops of the current round that run on the data plane (reused: cleared after every round). */
    private final List<PendingOp> onDataPlane = new ArrayList<>();

    /**
     * @param a the generation, or for a process set its workers in the set's rank order
     * @param self this worker, with its rank in {@code a}
     * @param config the job's settings
     * @param coordinator the way to the coordinator
     */
    public RankGeneration(Assignment a, SetScope scope, WorkerInfo self, KoloConfig config, ToCoordinator coordinator,
                   Observability observability, Completion completion, Tuning tuning) {
        this.tuning = tuning;
        this.assignment = a;
        this.scope = scope;
        this.self = self;
        this.observability = observability;
        this.completion = completion;
        this.generation = a.generation();
        this.rank = self.rank();
        this.size = a.workers().size();
        this.cache = new TensorCache(config.get(Settings.CACHE_CAPACITY));
        this.demoteAfterNanos = Math.min(MAX_DEMOTE_AFTER_NANOS, config.get(Settings.STALL_WARNING).toNanos() / 10);
        this.responseAgreementNanos = DataPlanes.progressTimeout(config).toNanos();
        this.requests = new CoordinatorRequests(coordinator, a.coordinatorNode(), generation, scope, rank,
                observability.metrics);
    }

    /** Connects this generation's data plane (blocks until the ring is up or fails). */
    public void open(DataPlaneFactory factory, Reducer reducer) {
        dataPlane = factory.open(assignment, self, scope.id());
        closingRanks.forEach(dataPlane::peerClosing);
        if (abortCause != null) {
            dataPlane.abort(abortCause);
        }
        round = new AgreementRound(rank, size, cache, waiting, observability, reducer, tuning, this::protocolError);
        executor = new BatchExecutor(size, outcomes, observability, tuning, new CollectiveOps(rank, size, dataPlane),
                new EagerReduction(reducer, size));
    }

    @Override
    public long number() {
        return generation;
    }

    @Override
    public KoloException abortCause() {
        return abortCause;
    }

    /** Ends this generation: its data plane stops, its pending ops fail (a caller gave up on a stuck op). */
    @Override
    public void end(KoloException cause) {
        completion.abort(this, cause);
    }

    public boolean opened() {
        return executor != null;
    }

    // ---------------------------------------------------------------- submissions

    /** Takes a newly submitted op: it waits in agreement rounds if cached, else it goes to the coordinator. */
    public void admit(PendingOp op) {
        KoloException stall = stalled.take(op.spec.name);
        if (stall != null) {
            completion.finish(op, null, stall);
            return;
        }
        if (size == 1) {
            executor.runLocally(op);
            return;
        }
        if (!anyJoined && op.spec.cacheable()) {
            int id = cache.idOf(op.spec);
            if (id >= 0 && !waiting.waitsFor(id)) {
                op.cacheId = id;
                waiting.add(id, op);
                dirty = true;
                observability.metrics.cacheHit(true);
                return;
            }
            int stale = cache.idOfName(op.spec.name);
            if (stale >= 0) {
                waiting.invalidate(stale); // another spec under a cached name: every rank drops the entry
                dirty = true;
            }
        }
        request(op);
    }

    private void request(PendingOp op) {
        op.cacheId = -1;
        observability.metrics.cacheHit(false);
        requests.request(op.spec, responses.received());
    }

    /** Sends again what the coordinator has not answered for a while (see {@link CoordinatorRequests}). */
    public void resendDue(long now) {
        if (abortCause == null) {
            requests.resendDue(now, responses.received());
        }
    }

    /** This rank joins: it has no more data and contributes zeros to allreduces until every rank has joined. */
    public void join(CompletableFuture<Integer> result) {
        if (joinResult != null && !joinResult.isDone()) {
            result.completeExceptionally(new IllegalStateException("join() is already in progress on this rank"));
            return;
        }
        if (size == 1) {
            result.complete(rank);
            return;
        }
        joined = true;
        joinResult = result;
        dirty = true;
        requests.join(responses.received());
    }

    /**
     * The generation ended (its pending ops have failed): a join in progress fails with it, and everything it
     * waited for is dropped, so that no deadline of a dead generation (a tensor's demotion, a response's
     * agreement) falls due and wakes the engine again and again until the next generation.
     */
    public void aborted(KoloException cause) {
        if (joinResult != null) {
            joinResult.completeExceptionally(cause);
        }
        joined = false;
        waiting.clear();
        responses.clear();
        requests.clear();
        dirty = false;
    }

    /** A coordinator response or join completion of this generation has arrived. */
    public void onResponse(ControlMessage m, long arrivedNanos) {
        if (responses.isCopy(m)) {
            return;
        }
        if (m instanceof OpResponse r) {
            r.entries().forEach(e -> requests.answered(e.name()));
        } else {
            requests.joinAnswered();
        }
        if (responses.add(m, arrivedNanos)) {
            dirty = true;
        }
    }

    // ---------------------------------------------------------------- rounds

    /** @return whether this rank has something to tell the others, or a waiting tensor is due for demotion */
    public boolean roundDue(long now) {
        return size > 1 && executor != null && abortCause == null && (dirty || now >= roundDeadline());
    }

    /** @return when this rank must next do something unasked: a round ({@link #roundDeadline}) or a resend */
    public long nextDeadline() {
        return Math.min(roundDeadline(), abortCause != null ? Long.MAX_VALUE : requests.resendAt());
    }

    /**
     * @return when the oldest tensor waiting in rounds is due to go to the coordinator, or the oldest response
     *         held here (and not yet everywhere) is overdue; Long.MAX_VALUE when neither
     */
    private long roundDeadline() {
        if (abortCause != null) {
            return Long.MAX_VALUE; // set at once, from any thread; aborted() drops the state under the lock
        }
        long next = Long.MAX_VALUE;
        if (!waiting.isEmpty()) {
            next = waiting.oldestSubmitNanos() + demoteAfterNanos;
        }
        Long held = responses.nextArrival();
        if (held != null) {
            next = Math.min(next, held + responseAgreementNanos);
        }
        return next;
    }

    /**
     * @return whether this rank waits for anything (a tensor, a join, a coordinator response) or has something
     *         to tell the others
     */
    public boolean busy() {
        return abortCause == null && (dirty || !waiting.isEmpty() || (joinResult != null && !joinResult.isDone())
                || responses.pending());
    }

    /**
     * One agreement round: exchange with every rank, then run what every rank has ready, then what the
     * coordinator has answered and every rank holds, then apply the cache changes every rank makes here.
     */
    public void round(long now) {
        waiting.invalidateOverdue(now, demoteAfterNanos); // waited too long: to the coordinator's stall inspector
        int length = round.write(dataPlane, joined, responses.received());
        dirty = false;
        int n = round.exchange(length, responses.received(), responses.executed());
        if (n < 0 || n > 0 && !runAgreed(n)) {
            return;
        }
        removed.clear();
        round.dropInvalid(removed);
        Long heldSince = round.lacking == null ? null : responses.nextArrival();
        long agreedAt = heldSince == null ? 0 : round.agreedAt();
        if (heldSince != null && agreedAt - heldSince > responseAgreementNanos) {
            // A generation failure like a lost peer: an elastic job regroups and the new generation's
            // coordinator sends everything afresh; a fixed job stops with this message.
            completion.abort(this, new WorkerLostException("coordinator response " + responses.executed()
                    + " of generation " + generation + " reached this rank " + (agreedAt - heldSince) / 1_000_000
                    + " ms ago but not ranks " + round.lacking + ": the control plane lost a message; generation "
                    + generation + " ends", -1, null));
            return;
        }
        while (responses.executed() < round.minReceived && abortCause == null) {
            long arrived = responses.nextArrival();
            ControlMessage m = responses.takeNext();
            if (m instanceof OpResponse r) {
                tuning.coordinated();
                if (!runResponse(r, arrived)) {
                    return;
                }
            } else {
                joined = false;
                if (joinResult != null) {
                    joinResult.complete(((JoinResponse) m).lastRank());
                }
            }
        }
        anyJoined = round.someJoined;
        if (anyJoined) {
            for (PendingOp op : waiting.ops()) {
                demote(op);
            }
        } else {
            for (int i = 0; i < removed.size(); i++) {
                PendingOp op = waiting.get(removed.get(i));
                if (op != null) {
                    demote(op);
                }
            }
        }
        if (tuning.tuning() && !busy()) {
            tuning.idle(System.nanoTime()); // a step ended here: the tuner's sample may end with it
        }
    }

    /** Runs the agreed ids: eager ones from the round's bytes, the rest fused on the data plane. */
    private boolean runAgreed(int n) {
        n = round.settle(n);
        if (n < 0) {
            return false;
        }
        List<PendingOp> rest = onDataPlane;
        rest.clear();
        for (int k = 0; k < n; k++) {
            int id = round.agreed(k);
            PendingOp op = waiting.take(id);
            if (op == null) {
                protocolError("every rank is ready for cache id " + id + " but this rank waits for no tensor under it");
                return false;
            }
            cache.touch(id);
            if (round.eagerEverywhere(k)) {
                executor.reduceEager(op, round.eagerData(), round.eagerOffset(k), round.agreedAt);
            } else {
                rest.add(op);
            }
        }
        try {
            return rest.isEmpty() || executor.runFused(rest, round.agreedAt);
        } finally {
            rest.clear(); // keeps no op (nor its tensors) past its round
        }
    }

    /** A cached tensor goes to the coordinator after all (its entry dropped, a rank joined, or it waited too long). */
    private void demote(PendingOp op) {
        waiting.take(op.cacheId);
        observability.metrics.demoted();
        request(op);
    }

    // ---------------------------------------------------------------- coordinator responses

    /** Runs one coordinator response (every rank runs it in the same round). @return false if the generation ended */
    private boolean runResponse(OpResponse r, long arrivedNanos) {
        String malformed = ControlChecks.response(r, size);
        if (malformed != null) {
            protocolError(malformed);
            return false;
        }
        if (!r.failed()) {
            for (ResponseEntry e : r.entries()) {
                if (e.cacheable() && e.spec() != null) {
                    cache.insert(e.spec(), removed::add);
                }
            }
        }
        List<OpSpec> specs = new ArrayList<>(r.entries().size());
        List<long[]> perRank = new ArrayList<>(r.entries().size());
        List<Tensor> inputs = new ArrayList<>(r.entries().size());
        List<Tensor> outputs = new ArrayList<>(r.entries().size());
        List<PendingOp> entryOps = new ArrayList<>(r.entries().size());
        for (ResponseEntry e : r.entries()) {
            PendingOp op = completion.pending(e.name());
            if (op != null && (op.generation != this || op.cacheId >= 0)) {
                op = null; // not this generation's request (a new submit of the name, in rounds or not yet admitted)
            }
            entryOps.add(op);
            if (r.failed()) {
                continue;
            }
            OpSpec spec = op != null ? op.spec : e.spec();
            if (op == null && !(joined && r.type() == OpType.ALLREDUCE && spec != null)) {
                protocolError("the coordinator scheduled " + r.type().label() + " '" + e.name()
                        + "' which this rank never submitted");
                return false;
            }
            String wrong = ControlChecks.entry(r.type(), spec, e.perRank(), rank, size);
            if (wrong != null) {
                protocolError(wrong);
                return false;
            }
            specs.add(spec);
            perRank.add(e.perRank());
            inputs.add(op != null ? op.input : Tensor.allocate(spec.dtype, spec.shape)); // joined: zeros
            outputs.add(op != null ? op.output : null);
        }
        if (r.failed()) {
            failAll(r, entryOps);
            return true;
        }
        return executor.run(r.type(), entryOps, specs, perRank, inputs, outputs, arrivedNanos);
    }

    /**
     * An error response fails this rank's ops of its entries; a stalled entry this rank has not submitted yet
     * fails its late submit.
     */
    private void failAll(OpResponse r, List<PendingOp> entryOps) {
        if (r.errorKind() == ControlMessage.ErrorKind.MISMATCH) {
            observability.metrics.mismatch();
        }
        KoloException error = r.errorKind() == ControlMessage.ErrorKind.MISMATCH
                ? new CollectiveMismatchException(r.error()) : new KoloException(r.error());
        for (int i = 0; i < entryOps.size(); i++) {
            PendingOp op = entryOps.get(i);
            if (op != null) {
                completion.finish(op, null, error);
            } else if (r.errorKind() == ControlMessage.ErrorKind.STALLED) {
                stalled.put(r.entries().get(i).name(), error);
            }
        }
    }

    /** A message this rank cannot follow: the ranks no longer agree, so the generation ends. */
    void protocolError(String problem) {
        LOG.warn("control plane: rank {} refuses a round or response: {}", rank, problem);
        completion.abort(this, new KoloException("protocol error: " + problem));
    }

    /** @return how many specs this rank's cache holds */
    public int cachedSpecs() {
        return cache.size();
    }

    /** Adds the sizes of this generation's structures kept per tensor name to {@code sizes} (for tests). */
    public void perNameSizes(Map<String, Integer> sizes) {
        sizes.put("cache", cache.size());
        sizes.put("stalled", stalled.size());
        sizes.put("unanswered", requests.size());
        sizes.put("responses", responses.size());
    }
}
