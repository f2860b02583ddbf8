package dev.kolo.runtime.internal.engine.op;

import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.control.OpSpec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;

/**
 * An op this rank has submitted and not yet seen complete, and the future its caller gets: one object per op,
 * which the engine's queues and lists link through its own fields, so that a cached op allocates nothing else.
 * A thread that waits on it ({@link #join}, {@link #get}) drives the rank's collective engine meanwhile (see
 * {@link OpDriver}), as a blocking call does: no thread has to be woken to hand it the result. Stages
 * derived from it are plain {@link CompletableFuture}s.
 */
public final class PendingOp extends CompletableFuture<Tensor> {
    public final OpSpec spec;
    /**
     * What the op reads, and where an allreduce writes its result (the input itself for an in-place one; null for
     * a new tensor): the caller's tensors until its caller gives up on it, then a private copy ({@link #detach}).
     * Read and written under the engine lock, at each use: the engine keeps no reference to them between steps.
     */
    public Tensor input;
    public Tensor output;
    public final OpGeneration generation;
    public final long submitNanos = System.nanoTime();
    private final OpDriver driver;
    /** Its record in the flight recorder ({@code FlightRecorder.submitted}), or -1. */
    public long flightId = -1;
    /**
     * When the op's result was ready, if the engine knew without reading the clock (an eager op under the flight
     * recorder alone: its round's end), else 0 and its completion reads the clock.
     */
    public long doneNanos;
    /** The cache id under which it waits in the agreement rounds, or -1 (new, or sent to the coordinator). */
    public int cacheId = -1;
    /**
     * Its outcome when it finished under the engine lock, delivered to the future once the lock is let go: the
     * result tensor, or the failure (a {@link Throwable}); one field keeps the op small.
     */
    public Object outcome;
    /** The registration of its name while it is in flight ({@link NameSlot}). */
    public NameSlot slot;
    /** The op submitted before it, while both are in the engine's submissions (the drive stage's queue). */
    public PendingOp nextSubmitted;
    /** The op finished before it, while both wait to be delivered (by the drive stage, once the lock is let go). */
    public PendingOp nextFinished;
    /** Its neighbours in submission order while it waits in agreement rounds (the agree stage's waiting list). */
    public PendingOp waitingBefore;
    public PendingOp waitingAfter;
    /** A thread parked until this op is done, woken when it completes ({@link OpDriver#drive}). */
    private volatile Thread waiter;
    private static final AtomicReferenceFieldUpdater<PendingOp, Thread> WAITER =
            AtomicReferenceFieldUpdater.newUpdater(PendingOp.class, Thread.class, "waiter");

    public PendingOp(OpSpec spec, Tensor input, Tensor output, OpGeneration generation, OpDriver driver) {
        this.spec = spec;
        this.input = input;
        this.output = output;
        this.generation = generation;
        this.driver = driver;
    }

    /**
     * Under the engine lock, between steps (so no step is using the op's tensors): if the op has not finished, it
     * goes on with a private copy of its input, made now, in place of the caller's tensors, which the engine will
     * never touch again; its result then lands in the copy and is discarded. Allocates only here, when a caller
     * gives up, never on the way of an op that completes.
     */
    public void detach() {
        if (slot == null || slot.inFlight() != this || input == null) {
            return; // finished (or failed): no step uses its tensors any more
        }
        Tensor copy = Tensor.allocate(input.dtype(), input.shape());
        copy.data().put(0, input.data(), 0, (int) input.byteSize());
        if (output != null) {
            output = copy; // an in-place op: its output is its input
        }
        input = copy;
    }

    /**
     * Wakes {@code t} once this op is done, without the allocation of a dependent stage. @return false if another
     * thread is registered already (the caller then registers a stage of its own)
     */
    public boolean wakeOnDone(Thread t) {
        if (!WAITER.compareAndSet(this, null, t)) {
            return false;
        }
        if (isDone()) {
            LockSupport.unpark(t); // completed while it registered
        }
        return true;
    }

    private void wakeWaiter() {
        Thread t = waiter;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    // Every way to complete it wakes the registered waiter.

    @Override
    public boolean complete(Tensor value) {
        boolean done = super.complete(value);
        wakeWaiter();
        return done;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        wakeWaiter();
        return done;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean done = super.cancel(mayInterruptIfRunning);
        wakeWaiter();
        return done;
    }

    @Override
    public void obtrudeValue(Tensor value) {
        super.obtrudeValue(value);
        wakeWaiter();
    }

    @Override
    public void obtrudeException(Throwable ex) {
        super.obtrudeException(ex);
        wakeWaiter();
    }

    // A waiter that leaves without the result (interrupted, past its deadline, or the op failed) returns only once
    // the engine no longer uses the op's tensors (OpDriver.letGo).

    @Override
    public Tensor join() {
        try {
            help(Long.MAX_VALUE, false);
            return super.join();
        } catch (RuntimeException e) {
            letGo();
            throw e;
        }
    }

    @Override
    public Tensor get() throws InterruptedException, ExecutionException {
        try {
            help(Long.MAX_VALUE, true);
            return super.get();
        } catch (InterruptedException | ExecutionException | RuntimeException e) {
            letGo();
            throw e;
        }
    }

    @Override
    public Tensor get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
            TimeoutException {
        try {
            if (isDone()) {
                return super.get();
            }
            long nanos = unit.toNanos(timeout);
            long start = System.nanoTime();
            help(nanos, true);
            return super.get(Math.max(0, nanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException | RuntimeException e) {
            letGo();
            throw e;
        }
    }

    /**
     * Drives the engine until this op is done or {@code nanos} have passed (then the plain wait takes over).
     * An interrupt ends a {@code join} with a {@link KoloInterruptedException} (a plain join would ignore it);
     * for a {@code get}, the plain wait then throws the InterruptedException its contract names.
     */
    private void help(long nanos, boolean interruptible) {
        if (isDone() || nanos <= 0) {
            return;
        }
        long now = System.nanoTime();
        long deadline = nanos >= Long.MAX_VALUE / 2 ? now + Long.MAX_VALUE / 2 : now + nanos;
        try {
            driver.drive(this, deadline);
        } catch (Deadlines.KoloTimeout ignored) {
            // the plain wait reports it
        } catch (KoloInterruptedException e) {
            if (!interruptible) {
                throw e;
            }
        }
    }

    /** Returns once the engine no longer uses this op's tensors (see {@link OpDriver#letGo}). */
    public void letGo() {
        driver.letGo(this);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
