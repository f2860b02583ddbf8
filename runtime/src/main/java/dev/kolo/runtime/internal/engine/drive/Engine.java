package dev.kolo.runtime.internal.engine.drive;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.engine.agree.Completion;
import dev.kolo.runtime.internal.engine.agree.RankGeneration;
import dev.kolo.runtime.internal.engine.op.OpGeneration;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import dev.kolo.runtime.internal.wiring.DataPlaneFactory;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The engine proper: the current generation, the queues that feed it from any thread (submissions, and tasks
 * such as an arrived response or a join), and one {@link #step} over all that is runnable. Whoever holds
 * {@link #lock} works it ({@link EngineDriver} decides who that is); only the collective thread opens a
 * generation's data plane, since that blocks until the ring is up.
 */
public final class Engine {
    /**
     * Where ranks outnumber the host's cores, the longest a thread that owns the engine polls for its peers after the
     * last work before it parks: a poller takes the core its peer needs, and a peer usually answers within tens of
     * microseconds while a parked thread takes tens of microseconds to wake (measured: 23 us per park/unpark hand-off
     * on the 2-core machine; 4-byte allreduce at np 4 173 us with 1 ms of polling against 260 us with none). Where each
     * rank has a core of its own, waits poll for {@code KOLO_POLL_TIME} instead.
     */
    static final long SHARED_CORES_POLL_NANOS = 1_000_000;
    /**
     * When the host's ranks exactly fill its cores (each bound to its own), how long each wait of an op spins before
     * it yields at every poll: a yield with nothing else to run is a system call, and a peer in step with this rank
     * answers within a microsecond or two, so the first polls of a wait are better spent on the core (measured at
     * np 2 on 2 cores, `bench allreduce` 5 runs each interleaved: 4 B 2.80 -> 2.11 us, 64 B 2.02 -> 1.45 us), while
     * the rank's other threads (the JIT, the cluster) get the core within that long. With {@code KOLO_CPU_BIND=off}
     * two ranks may share a core; a wait then loses at most this long to its peer before it yields.
     */
    static final long SPIN_FIRST_NANOS = 2_000;

    /**
     * How long the waits of a rank poll before they park.
     *
     * @param pollTime {@code KOLO_POLL_TIME}: where each rank has a core of its own, polling costs nothing its peers
     *        need, and a rank of a training step that waits milliseconds for the slowest rank would otherwise park
     *        and wake late (measured: DJL cnn at np 2 on 2 cores, medians of seven interleaved rounds, 0.84 of
     *        the ceiling parking after 1 ms, 0.89 polling for 30 ms)
     * @param sharing ranks given the same CPUs as this one
     * @param cores those CPUs
     */
    static long pollNanos(long pollTime, int sharing, int cores) {
        return sharing > cores ? Math.min(pollTime, SHARED_CORES_POLL_NANOS) : pollTime;
    }

    /** Held by the thread that works the engine; every field below marked so is guarded by it. */
    public final ReentrantLock lock = new ReentrantLock();
    private final DataPlaneFactory dataPlanes;
    private final Reducer reducer;
    private final Completion completion;
    /**
     * Ops submitted and not yet taken, newest first, linked through {@link PendingOp#nextSubmitted} (a stack any
     * thread pushes onto and the owner empties at once: no node per op).
     */
    private final AtomicReference<PendingOp> submissions = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** The generation ops are submitted to; replaced when a new one is assigned. */
    public volatile RankGeneration current;

    // Guarded by the lock.
    /** Ops of a generation whose data plane is not open yet. */
    private final ArrayDeque<PendingOp> early = new ArrayDeque<>();
    /** The generation whose data plane was opened last (written under the lock, read as a hint without it). */
    private RankGeneration opened;
    private long pollNanos;
    private boolean yieldWhilePolling;
    /** When the newest op admitted in this step was submitted, or 0 when the step must read the clock. */
    private long submittedNanos;

    public Engine(DataPlaneFactory dataPlanes, Reducer reducer, Completion completion) {
        this.dataPlanes = dataPlanes;
        this.reducer = reducer;
        this.completion = completion;
    }

    // ---------------------------------------------------------------- any thread

    public void submit(PendingOp op) {
        PendingOp head;
        do {
            head = submissions.get();
            op.nextSubmitted = head;
        } while (!submissions.compareAndSet(head, op));
    }

    /** Runs {@code task} on the thread that next works the engine. */
    public void post(Runnable task) {
        tasks.add(task);
    }

    /** @return whether ops or tasks are queued for the engine */
    boolean hasQueued() {
        return submissions.get() != null || !tasks.isEmpty();
    }

    /** @return whether the current generation's data plane still has to be opened (by the collective thread) */
    boolean openPending() {
        return current != opened;
    }

    /** @return whether {@code g} is the generation whose data plane was opened last */
    boolean isOpened(RankGeneration g) {
        return g == opened;
    }

    /** A caller may drive only a generation whose data plane is open (the collective thread opens it). */
    boolean canDrive() {
        RankGeneration g = current;
        return g != null && g.opened();
    }

    /** @return {@code g}'s data plane when there are peers to wait for on it, else null */
    static DataPlane ringOf(RankGeneration g) {
        return g != null && g.opened() && g.size > 1 && g.abortCause == null ? g.dataPlane : null;
    }

    // ---------------------------------------------------------------- under the lock

    /** One pass over everything runnable. @return whether it did anything */
    boolean step(boolean peerStarted) {
        boolean worked = false;
        for (Runnable t; (t = tasks.poll()) != null; ) {
            t.run();
            worked = true;
        }
        RankGeneration g = current;
        worked |= admit(g);
        if (g != null && g.opened() && g.abortCause == null && g.size > 1) {
            // The clock an op read at its submit, microseconds ago at most, serves the step that admits it: the
            // deadlines it is compared with (resends, demotions, rounds) are of milliseconds and seconds.
            long now = submittedNanos != 0 ? submittedNanos : System.nanoTime();
            g.resendDue(now); // only messages: the owner's polling goes on as before
            if (peerStarted || g.roundDue(now)) {
                try {
                    g.round(now);
                } catch (KoloException e) {
                    completion.abort(g, e);
                }
                worked = true;
            }
        }
        return worked;
    }

    /** Hands newly submitted ops to their generation. @return whether there were any */
    private boolean admit(RankGeneration g) {
        boolean any = false;
        submittedNanos = 0;
        if (g != null && g.opened()) {
            for (PendingOp op; (op = early.poll()) != null; ) {
                admitOne(g, op);
                any = true;
            }
        }
        PendingOp newest = submissions.getAndSet(null);
        if (newest != null && !any) {
            submittedNanos = newest.submitNanos; // the last submitted; an op of an unopened plane may be old
        }
        PendingOp oldest = null;
        while (newest != null) { // reverse the stack: ops are admitted in the order they were submitted
            PendingOp next = newest.nextSubmitted;
            newest.nextSubmitted = oldest;
            oldest = newest;
            newest = next;
        }
        for (PendingOp op = oldest, next; op != null; op = next) {
            next = op.nextSubmitted;
            op.nextSubmitted = null;
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
        if (op.slot.inFlight() != op) {
            return; // failed meanwhile (its generation was aborted)
        }
        OpGeneration of = op.generation;
        if (of != g || of.abortCause() != null) {
            completion.finish(op, null, of.abortCause() != null ? of.abortCause()
                    : new KoloException("generation " + of.number() + " ended before '" + op.spec.name + "' ran"));
            return;
        }
        g.admit(op);
    }

    /** Opens the current generation's data plane if it is not open yet (only on the collective thread). */
    void openCurrent() {
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
            // Spin only when the ranks given this process's CPUs leave a core to spare (for their other threads: the JVM, the
            // cluster); else yield the core at every poll (measured at np 2 on 2 cores: p99 2 ms spinning, 0.1 ms
            // yielding; callers spinning and the collective thread yielding cut the median small op 2-3x but ran
            // whole sizes at about 2 ms per op, a spinner holding the core its peer waited for a scheduler slice).
            // Where each rank has exactly one core, the first microseconds of each wait spin all the same.
            int cores = dataPlanes.hostCpus();
            int sharing = dataPlanes.ranksSharingCpus(g.self, g.assignment.workers());
            yieldWhilePolling = sharing >= cores;
            pollNanos = pollNanos(dataPlanes.pollTime().toNanos(), sharing, cores);
            g.dataPlane.polling(pollNanos, yieldWhilePolling, sharing == cores ? SPIN_FIRST_NANOS : 0);
        } catch (KoloException e) {
            completion.abort(g, e);
        }
    }

    /** @return how long an owner with nothing to do polls its peers before it parks */
    long pollNanos() {
        return pollNanos;
    }

    /** One poll of an owner waiting for its peers: spin, or yield the core when the host's ranks fill it. */
    void poll() {
        if (yieldWhilePolling) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }
}
