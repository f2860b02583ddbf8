package dev.kolo.runtime.internal.engine.drive;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.engine.agree.Completion;
import dev.kolo.runtime.internal.engine.agree.RankGeneration;
import dev.kolo.runtime.internal.engine.op.Deadlines;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who drives the {@link Engine}, and how the others wait. A caller blocked on its own op drives the engine
 * itself until the op is done ({@link #drive}), so a blocking collective costs no hand-off between threads
 * (each one a park and a wake-up, tens of microseconds); the collective thread ({@link DrivingThread}) drives whenever no caller
 * does. An owner with nothing to do polls its peers briefly (they usually answer within microseconds), then
 * parks in the data plane's selector; a caller that finds the engine taken parks until it is let go
 * ({@link #release}) or its op is done; whoever queues work wakes the thread that waits ({@link #wake}).
 *
 * <p>Ops finished under the lock are completed once it is let go ({@link #complete}): a completion callback
 * then never runs inside the engine, so it may call a blocking collective, which drives the engine itself (a
 * callback run under the lock would wait for an engine that nothing can drive).
 */
public final class EngineDriver {
    private static final Logger LOG = LoggerFactory.getLogger(EngineDriver.class);
    /** Longest single park: every deadline is computed, this only bounds the cost of a missed wake-up. */
    static final long MAX_PARK_NANOS = 50_000_000;
    /**
     * How long a caller polls for the engine lock (the collective thread holds it for a round, typically tens of
     * microseconds) before it parks until the lock is free or its op is done.
     */
    private static final long LOCK_POLL_NANOS = 500_000;
    /** An interrupted waiter's message: the op is not withdrawn, since the other ranks may be running it. */
    static final String INTERRUPTED = "interrupted while waiting for a collective; the op stays submitted and runs "
            + "once every rank has submitted it, on a copy of its tensors (the caller's are no longer touched), its "
            + "result on this rank discarded";

    private final Engine engine;
    private final Completion completion;
    private DrivingThread collective;
    /** Callers inside {@link #drive}: while there are any, the collective thread leaves the engine to them. */
    final AtomicInteger callers = new AtomicInteger();
    /**
     * Callers parked until the engine is free to drive again (or their op completes), each in a slot it claims
     * (no allocation); the few beyond the slots in a set.
     */
    private final AtomicReferenceArray<Thread> parkedCallers = new AtomicReferenceArray<>(PARKED_SLOTS);
    private final Set<Thread> moreParkedCallers = ConcurrentHashMap.newKeySet();
    private static final int PARKED_SLOTS = 32;
    /**
     * Callers registered as parked (raised before the slot is taken, lowered after it is freed): {@link #release}
     * looks at the slots only when there are any, which saves a blocking op a scan of them.
     */
    private final AtomicInteger parkedCount = new AtomicInteger();
    /** The thread that holds the lock and is blocked waiting for peers or work, if any. */
    private volatile Thread ownerWaiting;
    /** When the lock holder last saw its next deadline: the collective thread's idle wait ends by then. */
    volatile long engineDeadline = Long.MAX_VALUE;
    /** When the lock holder last looked, this rank had something to tell its peers or waited for them. */
    volatile boolean engineBusy;
    /**
     * Ops finished while the engine lock was held, whose futures are completed once it is let go: newest first,
     * linked through {@link PendingOp#nextFinished} (no node per op).
     */
    private final AtomicReference<PendingOp> finished = new AtomicReference<>();

    public EngineDriver(Engine engine, Completion completion) {
        this.engine = engine;
        this.completion = completion;
    }

    /** The thread that drives when no caller does, woken when work is left for it; set before it starts. */
    public void collective(DrivingThread collective) {
        this.collective = collective;
    }

    // ---------------------------------------------------------------- callers

    /**
     * Waits until {@code f} is done, driving the engine meanwhile when no other thread does.
     *
     * @throws Deadlines.KoloTimeout past the System.nanoTime() {@code deadline}
     */
    public void drive(CompletableFuture<?> f, long deadline) {
        if (engine.lock.isHeldByCurrentThread() && !f.isDone()) {
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
                // The clock is read only from the second pass on: a caller that finds the engine free usually has
                // its op done in the first (the deadline was set just before), and a reading costs 25 ns.
                long lockPollUntil = 0;
                boolean lockPolling = false;
                for (boolean first = true; !f.isDone(); first = false) {
                    if (me.isInterrupted()) {
                        // Every wait below would return at once (park, select): leave instead of spinning.
                        throw new KoloInterruptedException(INTERRUPTED);
                    }
                    if (!first && System.nanoTime() - deadline >= 0) {
                        throw new Deadlines.KoloTimeout();
                    }
                    if (engine.canDrive() && engine.lock.tryLock()) {
                        try {
                            driveLocked(f, deadline);
                        } finally {
                            release();
                        }
                        continue;
                    }
                    long now = System.nanoTime();
                    if (!lockPolling) {
                        lockPollUntil = now + LOCK_POLL_NANOS;
                        lockPolling = true;
                    }
                    if (now - lockPollUntil < 0) {
                        Thread.yield(); // the holder may need this core to finish
                    } else {
                        // Another thread drives: its op may complete ours, or it lets go of the engine first.
                        if (!unparkOnDone) {
                            if (!(f instanceof PendingOp op && op.wakeOnDone(me))) {
                                f.whenComplete((r, e) -> LockSupport.unpark(me));
                            }
                            unparkOnDone = true;
                        }
                        parkedCount.incrementAndGet();
                        int slot = parkSlot(me);
                        try {
                            if (!f.isDone() && (engine.lock.isLocked() || !engine.canDrive())) {
                                LockSupport.parkNanos(Math.min(deadline - now, MAX_PARK_NANOS));
                            }
                        } finally {
                            if (slot >= 0) {
                                parkedCallers.set(slot, null);
                            } else {
                                moreParkedCallers.remove(me);
                            }
                            parkedCount.decrementAndGet();
                        }
                    }
                }
            } finally {
                callers.decrementAndGet();
            }
        }
    }

    /** Registers {@code me} as parked. @return its slot, or -1 if it went into the overflow set */
    private int parkSlot(Thread me) {
        for (int i = 0; i < PARKED_SLOTS; i++) {
            if (parkedCallers.get(i) == null && parkedCallers.compareAndSet(i, null, me)) {
                return i;
            }
        }
        moreParkedCallers.add(me);
        return -1;
    }

    /**
     * A caller drives until its op is done or the engine needs the collective thread (a data plane to open). A
     * bug must not escape into the caller's collective call and leave the other ranks waiting: it ends the
     * generation, as on the collective thread.
     */
    private void driveLocked(CompletableFuture<?> f, long deadline) {
        boolean peer = false;
        // When the owner first found nothing to do since its last work (it polls its peers for a while from then);
        // the clock is read only when a step finds nothing to do, or before a step after the first.
        long idleSince = 0;
        boolean idle = false;
        // Ops finished meanwhile (perhaps f's) are delivered once the lock is let go.
        // An interrupted caller stops between steps (a round or op in progress ends first: the peers are in it
        // too), and drive() reports the interrupt; the collective thread drives the op on from there.
        Thread me = Thread.currentThread();
        for (boolean first = true; !f.isDone() && engine.canDrive() && finished.get() == null
                && !me.isInterrupted(); first = false) {
            if (!first && System.nanoTime() - deadline >= 0) {
                break;
            }
            try {
                if (engine.step(peer)) {
                    peer = false;
                    idle = false;
                    continue;
                }
            } catch (RuntimeException | Error e) {
                LOG.error("collective engine: unexpected failure on a caller's thread; aborting the generation", e);
                completion.abort(engine.current,
                        new KoloException("internal error in the collective engine: " + e, e));
                continue;
            }
            long now = System.nanoTime();
            if (!idle) {
                idleSince = now;
                idle = true;
            }
            peer = ownerWait(deadline, idleSince, now);
        }
    }

    /**
     * The owner has nothing to do: it polls its peers for a while after the last work (their round message
     * is usually microseconds away), then parks in the data plane's selector until a peer sends, work is
     * queued, the next deadline or {@code deadline}. @param now the clock, read just before
     * @return whether a peer has started something
     */
    private boolean ownerWait(long deadline, long lastWork, long now) {
        RankGeneration g = engine.current;
        DataPlane dp = Engine.ringOf(g);
        long until = Math.min(deadline, g == null ? Long.MAX_VALUE : g.nextDeadline());
        try {
            if (dp != null && now - lastWork < engine.pollNanos()) {
                boolean peer = dp.awaitPeer(0);
                if (!peer) {
                    engine.poll();
                }
                return peer;
            }
            ownerWaiting = Thread.currentThread();
            try {
                if (engine.hasQueued()) {
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
            completion.abort(g, e);
            return false;
        }
    }

    // ---------------------------------------------------------------- callers that leave without the result

    /**
     * Returns once this rank's engine no longer uses {@code op}'s tensors, for a caller that leaves without the op's
     * result (interrupted, past its deadline, or the op failed): the step that may be using them (an op on the data
     * plane, an agreement round) ends first, then the op, if it has not finished, goes on with a private copy
     * ({@link PendingOp#detach}); the caller may free or reuse its memory as soon as this returns. Nothing is
     * allocated on the way of an op that completes. Bounded: a step ends within {@code opTimeout}
     * ({@code KOLO_OP_TIMEOUT}); past it the generation is ended, which stops its data plane, and the wait goes on for
     * {@code progressTimeout} (the data plane's progress deadline) at most. Any thread but the engine's; the interrupt
     * status is kept as it was.
     *
     * @throws KoloException if even then the engine has not let go (a bug: the caller must not free the memory)
     */
    public void letGo(PendingOp op, java.time.Duration opTimeout, java.time.Duration progressTimeout) {
        if (op.isDone() && !op.isCompletedExceptionally()) {
            return; // completed with its result: the step that ran it had finished with its tensors
        }
        if (engine.lock.isHeldByCurrentThread()) {
            op.detach(); // between steps already
            return;
        }
        CompletableFuture<Void> released = new CompletableFuture<>();
        if (!detachIfFree(op, released)) {
            // A thread drives the engine: it runs this between its steps (woken if it waits for its peers).
            engine.post(() -> {
                if (!released.isDone()) {
                    op.detach();
                    released.complete(null);
                }
            });
            wake();
        }
        boolean interrupted = Thread.interrupted();
        try {
            interrupted |= awaitReleased(op, released, opTimeout.toNanos());
            if (!released.isDone()) {
                op.generation.end(new KoloException("a caller gave up on '" + op.spec.name + "' and the "
                        + "data plane still held its tensors after " + opTimeout.toSeconds() + " s (KOLO_OP_TIMEOUT): the "
                        + "generation ends so that it lets go of them"));
                interrupted |= awaitReleased(op, released, progressTimeout.toNanos());
            }
            if (!released.isDone()) {
                throw new KoloException("the collective engine did not let go of the tensors of '" + op.spec.name
                        + "' even after its generation ended: do not free their memory");
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Detaches {@code op} at once if no thread holds the engine (no step can be using its tensors then). */
    private boolean detachIfFree(PendingOp op, CompletableFuture<Void> released) {
        if (!engine.lock.tryLock()) {
            return false;
        }
        try {
            if (!released.isDone()) {
                op.detach();
                released.complete(null);
            }
        } finally {
            release();
        }
        return true;
    }

    /**
     * Waits until {@code released} is done or {@code nanos} have passed, driving the engine meanwhile, or detaching
     * {@code op} itself whenever the engine is free (a closed worker's, or a generation whose data plane never
     * opened, has no other thread to run the task). @return whether the thread was interrupted meanwhile
     */
    private boolean awaitReleased(PendingOp op, CompletableFuture<Void> released, long nanos) {
        long deadline = System.nanoTime() + nanos;
        boolean interrupted = false;
        while (!released.isDone() && System.nanoTime() - deadline < 0 && !detachIfFree(op, released)) {
            try {
                drive(released, Math.min(deadline, System.nanoTime() + MAX_PARK_NANOS));
            } catch (Deadlines.KoloTimeout e) {
                // look again
            } catch (KoloInterruptedException e) {
                interrupted |= Thread.interrupted(); // interrupted again: the memory still comes first
            }
        }
        return interrupted;
    }

    // ---------------------------------------------------------------- any thread

    /**
     * Releases the engine lock and wakes whoever waits for it: parked callers (one of them drives next), and the
     * collective thread if it parked while the lock was held and work is left for it. Without work it resumes
     * watching the peers by itself within a millisecond (its park while callers drive): waking it after every
     * blocking op would put a thread switch beside every op on a machine whose cores the ranks share. Then
     * completes the ops finished under the lock, on this thread.
     */
    void release() {
        RankGeneration g = engine.current;
        engineDeadline = g == null ? Long.MAX_VALUE : g.nextDeadline();
        engineBusy = g != null && g.busy();
        boolean work = engine.hasQueued() || engineBusy || !engine.isOpened(g);
        engine.lock.unlock();
        // A caller about to park raised the count and took its slot before it looked at the lock once more: either
        // it sees the lock free and does not park, or this sees the count and wakes it.
        if (parkedCount.get() > 0) {
            unparkCallers();
        }
        if (work) {
            collective.wakeIfParked();
        }
        deliver();
    }

    private void unparkCallers() {
        for (int i = 0; i < PARKED_SLOTS; i++) {
            Thread t = parkedCallers.get(i);
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
        if (!moreParkedCallers.isEmpty()) { // an iterator is an allocation: none when no caller waits
            for (Thread t : moreParkedCallers) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Something was queued: make sure a thread that owns or idles on the engine sees it. */
    public void wake() {
        RankGeneration g = engine.current;
        DataPlane dp = g == null ? null : g.dataPlane;
        collective.wakeIfIdle(dp);
        Thread owner = ownerWaiting;
        if (owner != null) {
            if (dp != null) {
                dp.wakeup();
            }
            LockSupport.unpark(owner);
        }
    }

    /** Completes {@code op} at once, or, on the thread that holds the engine, once it lets go. */
    public void complete(PendingOp op, Tensor result, Throwable error) {
        if (engine.lock.isHeldByCurrentThread()) {
            op.outcome = error != null ? error : result;
            PendingOp head;
            do {
                head = finished.get();
                op.nextFinished = head;
            } while (!finished.compareAndSet(head, op));
        } else if (error != null) {
            op.completeExceptionally(error);
        } else {
            op.complete(result);
        }
    }

    /**
     * Completes the futures of ops finished under the lock, on this thread, which no longer holds it: their
     * callbacks run here (a callback may itself drive the engine, and deliver what its own ops finished).
     */
    private void deliver() {
        for (PendingOp newest; (newest = finished.getAndSet(null)) != null; ) {
            PendingOp oldest = null;
            while (newest != null) { // in the order they finished
                PendingOp next = newest.nextFinished;
                newest.nextFinished = oldest;
                oldest = newest;
                newest = next;
            }
            for (PendingOp op = oldest, next; op != null; op = next) {
                next = op.nextFinished;
                op.nextFinished = null;
                Object outcome = op.outcome;
                op.outcome = null;
                if (outcome instanceof Throwable error) {
                    op.completeExceptionally(error);
                } else {
                    op.complete((Tensor) outcome);
                }
            }
        }
    }
}
