package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.agree.Completion;
import dev.kolo.runtime.internal.engine.agree.RankGeneration;
import dev.kolo.runtime.internal.engine.drive.CollectiveThread;
import dev.kolo.runtime.internal.engine.drive.Engine;
import dev.kolo.runtime.internal.engine.drive.EngineDriver;
import dev.kolo.runtime.internal.engine.op.Deadlines;
import dev.kolo.runtime.internal.engine.op.NameSlot;
import dev.kolo.runtime.internal.engine.op.OpDriver;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.wiring.DataPlaneFactory;
import dev.kolo.runtime.internal.wiring.DataPlanes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A rank's side of the collectives, as the rest of the worker sees it. Training threads submit named ops here;
 * the {@link RankGeneration} of the current generation agrees on them with the other ranks and executes them,
 * in the same order on every rank. This class keeps the ops in flight by name (a name runs once at a time) and
 * ends generations; the {@link Engine} runs under one lock, driven by a caller waiting for its own op or by the
 * {@link CollectiveThread} ({@link EngineDriver} says who and how the others wait).
 *
 * <p><b>Process sets.</b> The worker's client runs the whole generation's ops; each process set this rank is a
 * member of has a client of its own ({@link #openSet}): its own names, cache, agreement rounds, coordinator
 * negotiation (its requests name the set) and data-plane links, and its own collective thread, so that its ops
 * never wait for another set's. A set lives as long as its generation: the worker's client hands the set's
 * responses to it, ends it with its generation (aborted with the same cause, or closed when the next generation
 * is assigned) and closes it with the worker.
 *
 * <p>A name is registered once, in a {@link NameSlot} kept while the name is used, and a submit claims it by a
 * compare-and-set: a cached op in the steady state allocates nothing but its {@link PendingOp}, which is the
 * future its caller gets.
 */
public final class CollectiveClient implements AutoCloseable, Completion, OpDriver {
    private final ControlChannel node;
    private final Observability observability;
    private final SetScope scope;
    private final DataPlaneFactory dataPlanes;
    private final Reducer reducer;
    private final String threadName;
    /** Makes each generation with its settings, tuning and way to the coordinator. */
    private final Generations generations;
    /** The process sets of the current generation this rank is a member of, by id (the worker's client only). */
    private final ConcurrentHashMap<Integer, CollectiveClient> sets = new ConcurrentHashMap<>();
    /**
     * Most names kept registered: beyond it, idle names are let go (a job that names every step's tensors anew
     * must not grow this for ever). As many as the response cache holds ({@code KOLO_CACHE_CAPACITY}: a name
     * beyond it would not be agreed from the cache either), and at least {@link #MIN_NAMES_KEPT}.
     */
    private final int namesKept;
    static final int MIN_NAMES_KEPT = 1024;
    private final ConcurrentHashMap<String, NameSlot> names = new ConcurrentHashMap<>();
    private final Engine engine;
    private final EngineDriver driver;
    private final CollectiveThread collective;

    public CollectiveClient(ControlChannel node, DataPlaneFactory dataPlanes, Reducer reducer, String threadName,
                     Observability observability) {
        this(node, dataPlanes, reducer, threadName, observability, SetScope.GLOBAL);
    }

    private CollectiveClient(ControlChannel node, DataPlaneFactory dataPlanes, Reducer reducer, String threadName,
                             Observability observability, SetScope scope) {
        this.node = node;
        this.observability = observability;
        this.scope = scope;
        this.dataPlanes = dataPlanes;
        this.reducer = reducer;
        this.threadName = threadName;
        this.generations = new Generations(node, scope, observability);
        this.namesKept = Math.max(MIN_NAMES_KEPT, node.config().get(Settings.CACHE_CAPACITY));
        this.engine = new Engine(dataPlanes, reducer, this);
        this.driver = new EngineDriver(engine, this);
        this.collective = new CollectiveThread(engine, driver, this, threadName);
        driver.collective(collective);
        collective.start();
    }

    /**
     * Submits one named op; the future completes with the result or the op's failure.
     *
     * @param output where an allreduce writes its result (may be the input itself), or null for a new tensor
     * @param waitForIt the caller will {@link #await} the op at once and so drive the engine itself: the
     *        collective thread is not woken for it
     */
    public CompletableFuture<Tensor> submit(OpSpec spec, Tensor input, Tensor output, boolean waitForIt) {
        RankGeneration g = engine.current;
        if (g == null) {
            return CompletableFuture.failedFuture(new KoloException("no generation: the worker is closed"));
        }
        if (g.abortCause != null) {
            return CompletableFuture.failedFuture(g.abortCause);
        }
        PendingOp op = new PendingOp(spec, input, output, g, this);
        NameSlot slot = NameSlot.claim(names, namesKept, spec.name, op);
        if (slot.lastSpec != spec) { // usually the same spec again: a volatile store costs a fence
            slot.lastSpec = spec;
        }
        op.flightId = observability.flight().submitted(spec, scope.id(), g.generation, ++slot.submits, op.submitNanos);
        if (g.abortCause != null) { // aborted while we registered: do not leave it behind
            slot.release(op);
            observability.flight().finished(op.flightId, System.nanoTime(), g.abortCause);
            return CompletableFuture.failedFuture(g.abortCause);
        }
        engine.submit(op);
        if (!waitForIt) {
            driver.wake();
        }
        return op;
    }

    /**
     * @return the spec this rank last submitted under {@code name} (while the name stays registered), or null:
     *         a caller submitting the same op again may pass it instead of a new one
     */
    public OpSpec lastSpec(String name) {
        NameSlot slot = names.get(name);
        return slot == null ? null : slot.lastSpec;
    }

    /** Tells the coordinator this rank has joined; completes with the last rank to join. */
    public CompletableFuture<Integer> join() {
        RankGeneration g = engine.current;
        if (g == null || g.abortCause != null) {
            return CompletableFuture.failedFuture(g == null ? new KoloException("no generation") : g.abortCause);
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        engine.post(() -> {
            if (g != engine.current || g.abortCause != null) {
                result.completeExceptionally(g.abortCause != null ? g.abortCause
                        : new KoloException("generation " + g.generation + " ended before join() ran"));
            } else {
                g.join(result);
            }
        });
        driver.wake();
        return result;
    }

    /**
     * Waits for {@code f} until the System.nanoTime() {@code deadline}, driving the engine meanwhile when no
     * other thread does; rethrows the op's own exception unwrapped.
     *
     * @throws Deadlines.KoloTimeout past the deadline
     */
    public <T> T await(CompletableFuture<T> f, long deadline) {
        return await(f, System.nanoTime(), deadline);
    }

    /**
     * Waits for an op this thread has just submitted (a blocking call's), for at most {@code timeoutNanos} from its
     * submit: the op's submit time starts the wait, so the clock is not read again for it.
     *
     * @throws Deadlines.KoloTimeout past the deadline
     */
    public <T> T awaitSubmitted(CompletableFuture<T> f, long timeoutNanos) {
        long start = f instanceof PendingOp op ? op.submitNanos : System.nanoTime();
        return await(f, start, start + timeoutNanos);
    }

    private <T> T await(CompletableFuture<T> f, long start, long deadline) {
        try {
            drive(f, deadline);
            return Deadlines.await(f, deadline);
        } catch (RuntimeException e) { // leaving without the result: the caller gets its tensors back first
            if (f instanceof PendingOp op) {
                op.letGo();
            }
            throw e;
        } finally {
            // The program's time blocked in Kolo: its step time minus this is the rank's own work (the status
            // page plots it per rank, so that the rank the others wait for stands out).
            observability.metrics.waited(System.nanoTime() - start);
        }
    }

    /**
     * Returns once this rank's engine no longer uses {@code op}'s tensors, for a caller that leaves without the op's
     * result ({@link EngineDriver#letGo}): within {@code KOLO_OP_TIMEOUT}, past which the generation is ended so that
     * the data plane lets go, and then within the data plane's progress deadline.
     */
    @Override
    public void letGo(PendingOp op) {
        KoloConfig config = node.config();
        driver.letGo(op, config.get(Settings.OP_TIMEOUT), DataPlanes.progressTimeout(config));
    }

    /** {@link #letGo} for a future the caller stops waiting for; any other future is left as it is. */
    public static void abandon(CompletableFuture<?> f) {
        if (f instanceof PendingOp op) {
            op.letGo();
        }
    }

    /**
     * Waits until {@code f} is done, driving the engine meanwhile when no other thread does.
     *
     * @throws Deadlines.KoloTimeout past the System.nanoTime() {@code deadline}
     */
    @Override
    public void drive(CompletableFuture<?> f, long deadline) {
        driver.drive(f, deadline);
    }

    /** A new generation was agreed: its data plane opens on the collective thread; the last one's sets end. */
    public void onAssignment(Assignment a, WorkerInfo self) {
        RankGeneration previous = engine.current;
        engine.current = generations.generation(a, self, this);
        driver.wake();
        if (previous != null) {
            endSets(new KoloException("generation " + previous.generation + " ended (the job regrouped into generation "
                    + a.generation() + "), and its process sets with it: create them again with processSet(...) on "
                    + "every rank of the new generation"));
        }
    }

    /** @return the coordinator's cycle time in force (tuned, or the setting) */
    public long cycleTimeNanos() {
        return generations.cycleTimeNanos();
    }

    /** @return whether this worker's tuner has finished its search (false when it has none) */
    public boolean tuningDone() {
        return generations.tuningDone();
    }

    /** @return the tuned values each generation took on this rank, and at which agreement round (for tests) */
    public List<String> tuningHistory() {
        return generations.tuningHistory();
    }

    /**
     * Opens this rank's side of process set {@code set} of generation {@code generation} (the worker's client
     * only; the caller has checked that every rank asked for the same set and that this rank is a member). Its
     * data plane connects on its own collective thread; its first op waits for that.
     *
     * @return the set's client, or null if {@code generation} is no longer the current one
     */
    public CollectiveClient openSet(long generation, SetScope set) {
        RankGeneration g = engine.current;
        if (g == null || g.generation != generation || g.abortCause != null || set.global()) {
            return null;
        }
        int setRank = set.ranks().indexOf(g.rank);
        if (setRank < 0) {
            throw new IllegalArgumentException("rank " + g.rank + " is not a member of " + set.describe());
        }
        List<WorkerInfo> members = new ArrayList<>(set.ranks().size());
        for (int i = 0; i < set.ranks().size(); i++) {
            WorkerInfo w = g.assignment.workers().get(set.ranks().get(i));
            members.add(w.withRanks(i, w.localRank(), w.localSize()));
        }
        CollectiveClient client = new CollectiveClient(node, dataPlanes, reducer, threadName + "-set" + set.id(),
                observability.forProcessSet(set.id()), set);
        client.onAssignment(new Assignment(generation, g.assignment.coordinatorNode(), List.copyOf(members)),
                members.get(setRank));
        CollectiveClient old = sets.put(set.id(), client);
        if (old != null) {
            old.close();
        }
        if (engine.current != g || g.abortCause != null) { // the generation ended meanwhile: so does the set
            endSet(set.id(), g.abortCause != null ? g.abortCause
                    : new KoloException("generation " + generation + " ended while process set " + set.id()
                    + " was created"));
        }
        return client;
    }

    /** Closes process set {@code id} on this rank: its pending ops fail with {@code cause}, its links close. */
    public void endSet(int id, KoloException cause) {
        CollectiveClient set = sets.remove(id);
        if (set != null) {
            set.close(cause);
        }
    }

    private void endSets(KoloException cause) {
        for (Integer id : List.copyOf(sets.keySet())) {
            endSet(id, cause);
        }
    }

    /** Called from the event loop when the coordinator's instruction arrives (for this rank, or one of its sets). */
    public void onResponse(ControlMessage m) {
        int set = m instanceof OpResponse r ? r.set() : ((JoinResponse) m).set();
        if (set != scope.id()) {
            CollectiveClient client = sets.get(set);
            if (client != null) {
                client.onResponse(m);
            }
            return; // a set this rank has ended: nothing waits for it
        }
        long arrived = System.nanoTime();
        long generation = m instanceof OpResponse r ? r.generation() : ((JoinResponse) m).generation();
        engine.post(() -> {
            RankGeneration g = engine.current;
            if (g != null && g.generation == generation && g.abortCause == null) {
                g.onResponse(m, arrived);
            }
        });
        driver.wake();
    }

    /** Ends the current generation: wakes the data plane and fails every pending op with {@code cause}. */
    public void abort(KoloException cause) {
        abort(engine.current, cause);
    }

    /**
     * Rank {@code globalRank} of the current generation announced its close: when it goes, the data plane
     * reports its close, not a loss (see {@link DataPlane#peerClosing}). Any thread.
     */
    public void peerClosing(int globalRank) {
        RankGeneration g = engine.current;
        int rank = scope.global() ? globalRank : scope.ranks().indexOf(globalRank);
        if (g != null && rank >= 0) {
            g.closingRanks.add(rank);
            DataPlane dp = g.dataPlane;
            if (dp != null) {
                dp.peerClosing(rank);
            }
        }
        for (CollectiveClient set : sets.values()) {
            set.peerClosing(globalRank);
        }
    }

    /**
     * Membership saw a worker of the current generation leave: the generation ends with that cause. If the data
     * plane ended it first (a surviving peer closed its connections on its own abort, which names that peer),
     * later ops fail with this cause instead, which names the worker that was really lost.
     */
    public void workerLost(WorkerLostException cause) {
        RankGeneration g = engine.current;
        abort(g, cause);
        if (g != null) {
            g.abortCause = cause;
        }
        for (CollectiveClient set : sets.values()) {
            set.workerLost(cause);
        }
    }

    /**
     * Ends generation {@code g}. A late failure of an older generation (its op was still running when the next
     * generation was assigned, e.g. a connection its peer closed on its own abort) ends only that generation,
     * whose ops already failed when it was aborted: it must not abort the new one, or this rank alone would
     * leave the new generation and the others would wait for it (found by bench chaos partition-3-2).
     */
    @Override
    public void abort(RankGeneration g, KoloException cause) {
        if (g == null) {
            return;
        }
        if (g.abortCause == null) {
            g.abortCause = cause;
            DataPlane dp = g.dataPlane;
            if (dp != null) {
                dp.abort(cause);
            }
        }
        for (NameSlot slot : names.values()) {
            PendingOp op = slot.inFlight();
            if (op != null && op.generation == g && slot.release(op)) {
                observability.flight().finished(op.flightId, System.nanoTime(), cause);
                driver.complete(op, null, cause);
            }
        }
        engine.post(() -> g.aborted(cause));
        driver.wake();
        if (g == engine.current) { // a set ends with its generation, for the same reason
            for (CollectiveClient set : sets.values()) {
                set.abort(set.engine.current, cause);
            }
        }
    }

    /** Frees the name before completing, so the caller may reuse it as soon as it sees the result. */
    @Override
    public void finish(PendingOp op, Tensor result, Throwable error) {
        if (op == null || !op.slot.release(op)) {
            return;
        }
        if (op.flightId >= 0) {
            observability.flight().finished(op.flightId, op.doneNanos != 0 ? op.doneNanos : System.nanoTime(), error);
        }
        driver.complete(op, result, error);
    }

    @Override
    public PendingOp pending(String name) {
        NameSlot slot = names.get(name);
        return slot == null ? null : slot.inFlight();
    }

    /**
     * Calls {@code sink} with the name and age (in seconds) of every op in flight for longer than
     * {@code olderThanNanos}, at most {@code max} of them: what this rank waits for, for the status page. Any thread.
     */
    public void forEachWaiting(long olderThanNanos, int max, java.util.function.ObjDoubleConsumer<String> sink) {
        long now = System.nanoTime();
        int n = 0;
        for (NameSlot slot : names.values()) {
            PendingOp op = slot.inFlight();
            if (op != null && now - op.submitNanos > olderThanNanos && n++ < max) {
                sink.accept(op.spec.name, (now - op.submitNanos) / 1e9);
            }
        }
    }

    public int inFlightCount() {
        int n = 0;
        for (NameSlot slot : names.values()) {
            if (slot.inFlight() != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * @return the sizes of this rank's structures kept per tensor name (for tests: none may grow with every new
     *     name): registered names, cached specs, stalled names, requests the coordinator has not answered, and
     *     responses held
     */
    public java.util.Map<String, Integer> perNameSizes() {
        engine.lock.lock();
        try {
            java.util.Map<String, Integer> sizes = new java.util.TreeMap<>();
            sizes.put("names", names.size());
            RankGeneration g = engine.current;
            if (g != null) {
                g.perNameSizes(sizes);
            }
            return sizes;
        } finally {
            engine.lock.unlock();
        }
    }

    /** @return how many specs this rank's cache holds (for tests) */
    public int cachedSpecs() {
        engine.lock.lock();
        try {
            RankGeneration g = engine.current;
            return g == null ? 0 : g.cachedSpecs();
        } finally {
            engine.lock.unlock();
        }
    }

    @Override
    public void close() {
        close(new KoloException("worker is closing"));
    }

    /** Stops this client: pending ops fail with {@code cause}, the thread ends, the data plane closes. */
    private void close(KoloException cause) {
        endSets(cause);
        generations.close();
        abort(cause);
        collective.close();
        driver.wake();
        collective.interrupt();
        RankGeneration g = engine.current;
        if (g != null && g.dataPlane != null) {
            g.dataPlane.close();
        }
    }
}
