package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.dataplane.DataPlaneFactory;
import dev.kolo.runtime.internal.observability.Observability;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rank's side of the collectives. Training threads submit named ops here; the {@link RankGeneration} of the
 * current generation agrees on them with the other ranks and executes them, in the same order on every rank.
 *
 * <p><b>Who drives.</b> The engine (queues, agreement rounds, the data plane) runs under one lock, on whichever
 * thread holds it: a caller blocked on its own op drives the engine itself until the op is done, so a blocking
 * collective costs no hand-off between threads (each one a park and a wake-up, tens of microseconds); the
 * worker's collective thread drives whenever no caller does, so asynchronous ops progress while the training
 * thread computes, and a rank takes part in rounds its peers start. A thread that owns the engine and has
 * nothing to do polls its peers briefly (they usually answer within microseconds), then parks in the data
 * plane's selector; the collective thread waits without the lock, on a selector of its own, so a caller can
 * take over at once.
 */
public final class CollectiveClient implements AutoCloseable, RankGeneration.Completion {
    private static final Logger LOG = LoggerFactory.getLogger(CollectiveClient.class);
    /**
     * How long a thread that owns the engine polls for its peers after the last work before it parks: a peer
     * usually answers within tens of microseconds, and a parked thread takes tens of microseconds to wake
     * (measured: 23 us per park/unpark hand-off on the 2-core machine; 4-byte allreduce at np 4 173 us with
     * 1 ms of polling against 260 us with none).
     */
    static final long POLL_NANOS = 1_000_000;
    /** Longest single park: every deadline is computed, this only bounds the cost of a missed wake-up. */
    private static final long MAX_PARK_NANOS = 50_000_000;
    /**
     * Longest the collective thread keeps a peer's round waiting when this rank has nothing for it. Answering at
     * once would only agree on nothing; answering when the rank's own training thread submits (it then drives
     * the round itself) completes the op in that same round. Far below the data plane's progress deadline.
     */
    static final long LAZY_ANSWER_NANOS = 200_000_000;
    /**
     * How long the collective thread parks while callers drive before it looks again: the longest a peer's
     * round waits for this rank's answer when no caller drives and nothing is pending here (a rank with pending
     * work is answered at once).
     */
    private static final long COLLECTIVE_PARK_NANOS = 1_000_000;
    /**
     * How long a caller polls for the engine lock (the collective thread holds it for a round, typically tens of
     * microseconds) before it parks until the lock is free or its op is done.
     */
    private static final long LOCK_POLL_NANOS = 500_000;

    /** An interrupted waiter's message: the op is not withdrawn, since the other ranks may be running it. */
    static final String INTERRUPTED = "interrupted while waiting for a collective; the op stays submitted and runs "
            + "once every rank has submitted it, its result on this rank discarded";

    private final ControlChannel node;
    private final DataPlaneFactory dataPlanes;
    private final Reducer reducer;
    private final Observability observability;
    private final Map<String, PendingOp> inFlight = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<PendingOp> submissions = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /**
     * Ops finished while the engine lock was held, whose futures are completed once it is let go: a completion
     * callback then never runs inside the engine, so it may call a blocking collective, which drives the engine
     * itself (a callback run under the lock would wait for an engine that nothing can drive).
     */
    private final ConcurrentLinkedQueue<PendingOp> finished = new ConcurrentLinkedQueue<>();
    private final ReentrantLock engine = new ReentrantLock();
    private final AtomicInteger callers = new AtomicInteger();
    private final Thread thread;
    private volatile RankGeneration current;
    private volatile boolean closed;
    /** The collective thread waits without the lock: in the ring's idle wait, or parked. */
    private volatile boolean collectiveIdle;
    /** The thread that holds the lock and is blocked waiting for peers or work, if any. */
    private volatile Thread ownerWaiting;
    /** The collective thread is parked because callers drive (or the lock was taken). */
    private volatile boolean collectiveParked;
    /** Callers parked until the engine is free to drive again (or their op completes). */
    private final java.util.Set<Thread> parkedCallers = ConcurrentHashMap.newKeySet();
    /** When the lock holder last saw its next deadline: the collective thread's idle wait ends by then. */
    private volatile long engineDeadline = Long.MAX_VALUE;
    /** When the lock holder last looked, this rank had something to tell its peers or waited for them. */
    private volatile boolean engineBusy;

    // Guarded by the engine lock.
    /** Ops of a generation whose data plane is not open yet. */
    private final ArrayDeque<PendingOp> early = new ArrayDeque<>();
    private RankGeneration opened;
    private long pollNanos;
    private boolean yieldWhilePolling;

    public CollectiveClient(ControlChannel node, DataPlaneFactory dataPlanes, Reducer reducer, String threadName,
                     Observability observability) {
        this.node = node;
        this.dataPlanes = dataPlanes;
        this.reducer = reducer;
        this.observability = observability;
        this.thread = new Thread(this::loop, threadName);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    // ---------------------------------------------------------------- any thread

    /**
     * Submits one named op; the future completes with the result or the op's failure.
     *
     * @param output where an allreduce writes its result (may be the input itself), or null for a new tensor
     * @param waitForIt the caller will {@link #await} the op at once and so drive the engine itself: the
     *        collective thread is not woken for it
     */
    public CompletableFuture<Tensor> submit(OpSpec spec, Tensor input, Tensor output, boolean waitForIt) {
        RankGeneration g = current;
        if (g == null) {
            return CompletableFuture.failedFuture(new KoloException("no generation: the worker is closed"));
        }
        if (g.abortCause != null) {
            return CompletableFuture.failedFuture(g.abortCause);
        }
        PendingOp op = new PendingOp(spec, input, output, g, new OpFuture(this));
        if (inFlight.putIfAbsent(spec.name, op) != null) {
            throw new IllegalArgumentException("tensor name '" + spec.name + "' is already in flight on this rank; "
                    + "wait for that op to complete or use another name");
        }
        if (g.abortCause != null) { // aborted while we registered: do not leave it behind
            inFlight.remove(spec.name, op);
            return CompletableFuture.failedFuture(g.abortCause);
        }
        submissions.add(op);
        if (!waitForIt) {
            wake();
        }
        return op.future;
    }

    /** Tells the coordinator this rank has joined; completes with the last rank to join. */
    public CompletableFuture<Integer> join() {
        RankGeneration g = current;
        if (g == null || g.abortCause != null) {
            return CompletableFuture.failedFuture(g == null ? new KoloException("no generation") : g.abortCause);
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        tasks.add(() -> {
            if (g != current || g.abortCause != null) {
                result.completeExceptionally(g.abortCause != null ? g.abortCause
                        : new KoloException("generation " + g.generation + " ended before join() ran"));
            } else {
                g.join(result);
            }
        });
        wake();
        return result;
    }

    /**
     * Waits for {@code f} until the System.nanoTime() {@code deadline}, driving the engine meanwhile when no
     * other thread does; rethrows the op's own exception unwrapped.
     *
     * @throws Deadlines.KoloTimeout past the deadline
     */
    public <T> T await(CompletableFuture<T> f, long deadline) {
        drive(f, deadline);
        return Deadlines.await(f, deadline);
    }

    /**
     * Waits until {@code f} is done, driving the engine meanwhile when no other thread does.
     *
     * @throws Deadlines.KoloTimeout past the System.nanoTime() {@code deadline}
     */
    void drive(CompletableFuture<?> f, long deadline) {
        if (engine.isHeldByCurrentThread() && !f.isDone()) {
            // Only a future completed by the engine itself (not an op's) can get here: nothing could drive it.
            throw new KoloException("a blocking Kolo call was made inside Kolo's collective engine, which would "
                    + "wait for ever; use the asynchronous form and chain it (thenCompose), or run the callback "
                    + "elsewhere (thenApplyAsync)");
        }
        if (!f.isDone()) {
            Thread me = Thread.currentThread();
            boolean unparkOnDone = false;
            callers.incrementAndGet();
            try {
                long lockPollUntil = System.nanoTime() + LOCK_POLL_NANOS;
                while (!f.isDone()) {
                    if (me.isInterrupted()) {
                        // Every wait below would return at once (park, select): leave instead of spinning.
                        throw new KoloInterruptedException(INTERRUPTED);
                    }
                    long now = System.nanoTime();
                    if (now - deadline >= 0) {
                        throw new Deadlines.KoloTimeout();
                    }
                    if (canDrive() && engine.tryLock()) {
                        try {
                            driveLocked(f, deadline);
                        } finally {
                            released();
                        }
                    } else if (now - lockPollUntil < 0) {
                        Thread.yield(); // the holder may need this core to finish
                    } else {
                        // Another thread drives: its op may complete ours, or it lets go of the engine first.
                        if (!unparkOnDone) {
                            f.whenComplete((r, e) -> LockSupport.unpark(me));
                            unparkOnDone = true;
                        }
                        parkedCallers.add(me);
                        try {
                            if (!f.isDone() && (engine.isLocked() || !canDrive())) {
                                LockSupport.parkNanos(Math.min(deadline - now, MAX_PARK_NANOS));
                            }
                        } finally {
                            parkedCallers.remove(me);
                        }
                    }
                }
            } finally {
                callers.decrementAndGet();
            }
        }
    }

    /** A new generation was agreed: its data plane opens on the collective thread. */
    public void onAssignment(Assignment a, WorkerInfo self) {
        current = new RankGeneration(a, self, node, observability, this);
        wake();
    }

    /** Called from the event loop when the coordinator's instruction arrives. */
    public void onResponse(ControlMessage m) {
        long arrived = System.nanoTime();
        long generation = m instanceof OpResponse r ? r.generation() : ((JoinResponse) m).generation();
        tasks.add(() -> {
            RankGeneration g = current;
            if (g != null && g.generation == generation && g.abortCause == null) {
                g.onResponse(m, arrived);
            }
        });
        wake();
    }

    /** Ends the current generation: wakes the data plane and fails every pending op with {@code cause}. */
    public void abort(KoloException cause) {
        abort(current, cause);
    }

    /**
     * Membership saw a worker of the current generation leave: the generation ends with that cause. If the data
     * plane ended it first (a surviving peer closed its connections on its own abort, which names that peer),
     * later ops fail with this cause instead, which names the worker that was really lost.
     */
    public void workerLost(WorkerLostException cause) {
        RankGeneration g = current;
        abort(g, cause);
        if (g != null) {
            g.abortCause = cause;
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
        for (PendingOp op : new ArrayList<>(inFlight.values())) {
            if (op.generation == g && inFlight.remove(op.spec.name, op)) {
                complete(op, null, cause);
            }
        }
        tasks.add(() -> g.aborted(cause));
        wake();
    }

    /** Frees the name before completing, so the caller may reuse it as soon as it sees the result. */
    @Override
    public void finish(PendingOp op, Tensor result, Throwable error) {
        if (op == null || !inFlight.remove(op.spec.name, op)) {
            return;
        }
        complete(op, result, error);
    }

    /** Completes at once, or, on the thread that holds the engine, once it lets go (see {@link #finished}). */
    private void complete(PendingOp op, Tensor result, Throwable error) {
        if (engine.isHeldByCurrentThread()) {
            op.result = result;
            op.error = error;
            finished.add(op);
        } else if (error != null) {
            op.future.completeExceptionally(error);
        } else {
            op.future.complete(result);
        }
    }

    /**
     * Completes the futures of ops finished under the lock, on this thread, which no longer holds it: their
     * callbacks run here (a callback may itself drive the engine, and deliver what its own ops finished).
     */
    private void deliver() {
        for (PendingOp op; (op = finished.poll()) != null; ) {
            Throwable error = op.error;
            if (error != null) {
                op.future.completeExceptionally(error);
            } else {
                op.future.complete(op.result);
            }
        }
    }

    @Override
    public PendingOp pending(String name) {
        return inFlight.get(name);
    }

    public int inFlightCount() {
        return inFlight.size();
    }

    /** @return how many specs this rank's cache holds (for tests) */
    public int cachedSpecs() {
        engine.lock();
        try {
            RankGeneration g = current;
            return g == null ? 0 : g.cachedSpecs();
        } finally {
            engine.unlock();
        }
    }

    @Override
    public void close() {
        abort(new KoloException("worker is closing"));
        closed = true;
        wake();
        thread.interrupt();
        RankGeneration g = current;
        if (g != null && g.dataPlane != null) {
            g.dataPlane.close();
        }
    }

    /** Something was queued: make sure a thread that owns or idles on the engine sees it. */
    private void wake() {
        RankGeneration g = current;
        DataPlane dp = g == null ? null : g.dataPlane;
        if (collectiveIdle) {
            if (dp != null) {
                dp.idleWakeup();
            }
            LockSupport.unpark(thread);
        }
        Thread owner = ownerWaiting;
        if (owner != null) {
            if (dp != null) {
                dp.wakeup();
            }
            LockSupport.unpark(owner);
        }
    }

    /**
     * Releases the engine lock and wakes whoever waits for it: parked callers (one of them drives next), and the
     * collective thread if it parked while the lock was held and work is left for it. Without work it resumes
     * watching the peers by itself within {@link #COLLECTIVE_PARK_NANOS}: waking it after every blocking op would
     * put a thread switch beside every op on a machine whose cores the ranks share.
     */
    private void released() {
        RankGeneration g = current;
        engineDeadline = g == null ? Long.MAX_VALUE : g.nextDeadline();
        engineBusy = g != null && g.busy();
        boolean work = !submissions.isEmpty() || !tasks.isEmpty() || engineBusy || g != opened;
        engine.unlock();
        for (Thread t : parkedCallers) {
            LockSupport.unpark(t);
        }
        if (work && collectiveParked) {
            LockSupport.unpark(thread);
        }
        deliver();
    }

    /** A caller may drive only a generation whose data plane is open (the collective thread opens it). */
    private boolean canDrive() {
        RankGeneration g = current;
        return g != null && g.opened();
    }

    // ---------------------------------------------------------------- under the engine lock

    /**
     * A caller drives until its op is done or the engine needs the collective thread (a data plane to open). A
     * bug must not escape into the caller's collective call and leave the other ranks waiting: it ends the
     * generation, as on the collective thread.
     */
    private void driveLocked(CompletableFuture<?> f, long deadline) {
        boolean peer = false;
        long lastWork = System.nanoTime();
        // Ops finished meanwhile (perhaps f's) are delivered once the lock is let go.
        // An interrupted caller stops between steps (a round or op in progress ends first: the peers are in it
        // too), and drive() reports the interrupt; the collective thread drives the op on from there.
        Thread me = Thread.currentThread();
        while (!f.isDone() && canDrive() && finished.isEmpty() && !me.isInterrupted()) {
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                break;
            }
            try {
                if (step(peer)) {
                    peer = false;
                    lastWork = System.nanoTime();
                    continue;
                }
            } catch (RuntimeException | Error e) {
                LOG.error("collective engine: unexpected failure on a caller's thread; aborting the generation", e);
                abort(current, new KoloException("internal error in the collective engine: " + e, e));
                continue;
            }
            peer = ownerWait(deadline, lastWork);
        }
    }

    /** One pass over everything runnable. @return whether it did anything */
    private boolean step(boolean peerStarted) {
        boolean worked = false;
        for (Runnable t; (t = tasks.poll()) != null; ) {
            t.run();
            worked = true;
        }
        RankGeneration g = current;
        worked |= admit(g);
        if (g != null && g.opened() && g.abortCause == null && g.size > 1) {
            long now = System.nanoTime();
            g.resendDue(now); // only messages: the owner's polling goes on as before
            if (peerStarted || g.roundDue(now)) {
                try {
                    g.round(now);
                } catch (KoloException e) {
                    abort(g, e);
                }
                worked = true;
            }
        }
        return worked;
    }

    /** Hands newly submitted ops to their generation. @return whether there were any */
    private boolean admit(RankGeneration g) {
        boolean any = false;
        if (g != null && g.opened()) {
            for (PendingOp op; (op = early.poll()) != null; ) {
                admitOne(g, op);
                any = true;
            }
        }
        for (PendingOp op; (op = submissions.poll()) != null; ) {
            any = true;
            if (g != null && op.generation == g && !g.opened() && g.abortCause == null) {
                early.add(op);
            } else {
                admitOne(g, op);
            }
        }
        return any;
    }

    private void admitOne(RankGeneration g, PendingOp op) {
        if (inFlight.get(op.spec.name) != op) {
            return; // failed meanwhile (its generation was aborted)
        }
        RankGeneration of = op.generation;
        if (of != g || of.abortCause != null) {
            finish(op, null, of.abortCause != null ? of.abortCause
                    : new KoloException("generation " + of.generation + " ended before '" + op.spec.name + "' ran"));
            return;
        }
        g.admit(op);
    }

    /**
     * The owner has nothing to do: it polls its peers for a while after the last work (their round message
     * is usually microseconds away), then parks in the data plane's selector until a peer sends, work is
     * queued, the next deadline or {@code deadline}. @return whether a peer has started something
     */
    private boolean ownerWait(long deadline, long lastWork) {
        RankGeneration g = current;
        DataPlane dp = g != null && g.opened() && g.size > 1 && g.abortCause == null ? g.dataPlane : null;
        long now = System.nanoTime();
        long until = Math.min(deadline, g == null ? Long.MAX_VALUE : g.nextDeadline());
        try {
            if (dp != null && now - lastWork < pollNanos) {
                boolean peer = dp.awaitPeer(0);
                if (!peer) {
                    poll();
                }
                return peer;
            }
            ownerWaiting = Thread.currentThread();
            try {
                if (!submissions.isEmpty() || !tasks.isEmpty()) {
                    return false;
                }
                long nanos = Math.max(1000, Math.min(until - now, MAX_PARK_NANOS));
                if (dp != null) {
                    return dp.awaitPeer(nanos);
                }
                LockSupport.parkNanos(nanos);
                return false;
            } finally {
                ownerWaiting = null;
            }
        } catch (KoloException e) {
            abort(g, e);
            return false;
        }
    }

    private void poll() {
        if (yieldWhilePolling) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }

    /** Opens the current generation's data plane if it is not open yet (only on the collective thread). */
    private void openCurrent() {
        RankGeneration g = current;
        if (g == null || g == opened) {
            return;
        }
        RankGeneration previous = opened;
        opened = g;
        if (previous != null && previous.dataPlane != null) {
            previous.dataPlane.close();
        }
        if (g.abortCause != null) {
            return;
        }
        try {
            g.open(dataPlanes, reducer);
            // Spin only when the ranks of this host leave a core to spare (for their other threads: the JVM, the
            // cluster); else yield the core at every poll (measured at np 2 on 2 cores: p99 2 ms spinning, 0.1 ms
            // yielding).
            int cores = Runtime.getRuntime().availableProcessors();
            yieldWhilePolling = g.self.localSize() >= cores;
            pollNanos = POLL_NANOS;
            g.dataPlane.polling(pollNanos, yieldWhilePolling);
        } catch (KoloException e) {
            abort(g, e);
        }
    }

    // ---------------------------------------------------------------- the collective thread

    private void loop() {
        boolean peer = false;
        boolean polling = false;
        long lastWork = System.nanoTime();
        long peerSince = 0;
        while (!closed) {
            try {
                boolean local = !submissions.isEmpty() || !tasks.isEmpty() || current != opened || engineBusy
                        || System.nanoTime() - engineDeadline >= 0;
                if (peer && !local && !polling) {
                    // A peer started a round, and this rank has nothing for it: answer later, with what it submits
                    // by then (the round then agrees on it at once), unless nothing comes within the bound.
                    long now = System.nanoTime();
                    peerSince = peerSince == 0 ? now : peerSince;
                    if (now - peerSince < LAZY_ANSWER_NANOS) {
                        collectiveIdle = true;
                        try {
                            if (submissions.isEmpty() && tasks.isEmpty()) {
                                LockSupport.parkNanos(Math.min(LAZY_ANSWER_NANOS - (now - peerSince),
                                        engineDeadline - now));
                            }
                        } finally {
                            collectiveIdle = false;
                        }
                        continue;
                    }
                }
                peerSince = 0;
                if (peer || polling || local) {
                    if (callers.get() > 0 && canDrive() || !engine.tryLock()) {
                        parkCollective(); // a caller drives; it wakes this thread when it lets go
                        peer = false;
                        continue;
                    }
                    try {
                        openCurrent();
                        RankGeneration g = current;
                        DataPlane dp = ringOf(g);
                        if (peer && dp != null) {
                            peer = dp.awaitPeer(0); // a caller may have run that round already
                        }
                        if (step(peer)) {
                            peer = false;
                            polling = true;
                            lastWork = System.nanoTime();
                            continue;
                        }
                        peer = false;
                        if (dp != null && g.busy() && System.nanoTime() - lastWork < pollNanos) {
                            // This rank waits for its peers, who usually answer within microseconds.
                            peer = dp.awaitPeer(0);
                            if (!peer) {
                                poll();
                            }
                            continue;
                        }
                        polling = false;
                    } finally {
                        released();
                    }
                }
                peer = idle();
            } catch (KoloException e) {
                abort(current, e);
            } catch (RuntimeException | Error e) {
                if (closed) {
                    return;
                }
                LOG.error("collective thread: unexpected failure; aborting the generation", e);
                abort(current, new KoloException("internal error on the collective thread: " + e, e));
            }
        }
    }

    private static DataPlane ringOf(RankGeneration g) {
        return g != null && g.opened() && g.size > 1 && g.abortCause == null ? g.dataPlane : null;
    }

    /**
     * Waits without the lock for a peer's bytes, queued work, or the engine's next deadline, so that a caller
     * can take the engine at once. @return whether a peer sent something
     */
    private boolean idle() {
        RankGeneration g = current;
        DataPlane dp = g == opened ? ringOf(g) : null;
        collectiveIdle = true;
        try {
            if (!submissions.isEmpty() || !tasks.isEmpty() || current != opened) {
                return false;
            }
            long nanos = Math.max(1000, Math.min(engineDeadline - System.nanoTime(), MAX_PARK_NANOS));
            if (dp != null) {
                return dp.idleWait(nanos);
            }
            LockSupport.parkNanos(nanos);
            return false;
        } finally {
            collectiveIdle = false;
        }
    }

    private void parkCollective() {
        collectiveParked = true;
        try {
            if (callers.get() > 0 || engine.isLocked()) {
                LockSupport.parkNanos(COLLECTIVE_PARK_NANOS);
            }
        } finally {
            collectiveParked = false;
        }
    }
}
