package dev.kolo.runtime.internal.engine.drive;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.engine.agree.Completion;
import dev.kolo.runtime.internal.engine.agree.RankGeneration;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's collective thread: it drives the {@link Engine} whenever no caller does, so that asynchronous
 * ops progress while the training thread computes and the rank answers rounds its peers start, and it alone
 * opens each generation's data plane. It waits without the lock (in the data plane's idle wait, or parked), so
 * a caller can take the engine over at once; while callers drive it parks and leaves the engine to them.
 */
public final class CollectiveThread implements DrivingThread {
    private static final Logger LOG = LoggerFactory.getLogger(CollectiveThread.class);
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
    static final long COLLECTIVE_PARK_NANOS = 1_000_000;

    private final Engine engine;
    private final EngineDriver driver;
    private final Completion completion;
    private final Thread thread;
    private volatile boolean closed;
    /** This thread waits without the lock: in the ring's idle wait, or parked. */
    private volatile boolean idle;
    /** This thread is parked because callers drive (or the lock was taken). */
    private volatile boolean parked;

    public CollectiveThread(Engine engine, EngineDriver driver, Completion completion, String name) {
        this.engine = engine;
        this.driver = driver;
        this.completion = completion;
        this.thread = new Thread(this::loop, name);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Ends the loop: it sees the flag at its next pass; an interrupt ends the wait it is in. */
    public void close() {
        closed = true;
    }

    public void interrupt() {
        thread.interrupt();
    }

    /** Work was queued: if this thread waits idle, wake it (and its data plane's idle wait). */
    @Override
    public void wakeIfIdle(DataPlane dp) {
        if (idle) {
            if (dp != null) {
                dp.idleWakeup();
            }
            LockSupport.unpark(thread);
        }
    }

    /** The lock was let go with work left: if this thread parked for the callers, wake it. */
    @Override
    public void wakeIfParked() {
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    private void loop() {
        boolean peer = false;
        boolean polling = false;
        long lastWork = System.nanoTime();
        long peerSince = 0;
        while (!closed) {
            try {
                boolean local = engine.hasQueued() || engine.openPending() || driver.engineBusy
                        || System.nanoTime() - driver.engineDeadline >= 0;
                if (peer && !local && !polling) {
                    // A peer started a round, and this rank has nothing for it: answer later, with what it submits
                    // by then (the round then agrees on it at once), unless nothing comes within the bound.
                    long now = System.nanoTime();
                    peerSince = peerSince == 0 ? now : peerSince;
                    if (now - peerSince < LAZY_ANSWER_NANOS) {
                        idle = true;
                        try {
                            if (!engine.hasQueued()) {
                                LockSupport.parkNanos(Math.min(LAZY_ANSWER_NANOS - (now - peerSince),
                                        driver.engineDeadline - now));
                            }
                        } finally {
                            idle = false;
                        }
                        continue;
                    }
                }
                peerSince = 0;
                if (peer || polling || local) {
                    if (driver.callers.get() > 0 && engine.canDrive() || !engine.lock.tryLock()) {
                        park(); // a caller drives; it wakes this thread when it lets go
                        peer = false;
                        continue;
                    }
                    try {
                        engine.openCurrent();
                        RankGeneration g = engine.current;
                        DataPlane dp = Engine.ringOf(g);
                        if (peer && dp != null) {
                            peer = dp.awaitPeer(0); // a caller may have run that round already
                        }
                        if (engine.step(peer)) {
                            peer = false;
                            polling = true;
                            lastWork = System.nanoTime();
                            continue;
                        }
                        peer = false;
                        if (dp != null && g.busy() && System.nanoTime() - lastWork < engine.pollNanos()) {
                            // This rank waits for its peers, who usually answer within microseconds.
                            peer = dp.awaitPeer(0);
                            if (!peer) {
                                engine.poll();
                            }
                            continue;
                        }
                        polling = false;
                    } finally {
                        driver.release();
                    }
                }
                peer = idleWait();
            } catch (KoloException e) {
                completion.abort(engine.current, e);
            } catch (RuntimeException | Error e) {
                if (closed) {
                    return;
                }
                LOG.error("collective thread: unexpected failure; aborting the generation", e);
                completion.abort(engine.current, new KoloException("internal error on the collective thread: " + e, e));
            }
        }
    }

    /**
     * Waits without the lock for a peer's bytes, queued work, or the engine's next deadline, so that a caller
     * can take the engine at once. @return whether a peer sent something
     */
    private boolean idleWait() {
        RankGeneration g = engine.current;
        DataPlane dp = engine.isOpened(g) ? Engine.ringOf(g) : null;
        idle = true;
        try {
            if (engine.hasQueued() || engine.openPending()) {
                return false;
            }
            long nanos = Math.max(1000, Math.min(driver.engineDeadline - System.nanoTime(),
                    EngineDriver.MAX_PARK_NANOS));
            if (dp != null) {
                return dp.idleWait(nanos);
            }
            LockSupport.parkNanos(nanos);
            return false;
        } finally {
            idle = false;
        }
    }

    private void park() {
        parked = true;
        try {
            if (driver.callers.get() > 0 || engine.lock.isLocked()) {
                LockSupport.parkNanos(COLLECTIVE_PARK_NANOS);
            }
        } finally {
            parked = false;
        }
    }
}
