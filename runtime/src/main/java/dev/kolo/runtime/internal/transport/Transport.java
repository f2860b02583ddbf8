package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * One generation's links as the collectives use them (Gloo's pairs behind one face): ops run their schedules here
 * ({@link #run}, pumped by a {@link FramePump} on the calling thread), the threads that run no op wait here for a
 * peer to start one ({@link #awaitIncoming}, {@link #idleWait}), and the generation ends here ({@link #abort},
 * {@link #release}). How a wait polls is its {@link IdleStrategy}; which rank a failure lost, {@link PeerLoss}.
 *
 * <p>Deadlines: the selector wait is bounded by the time left before the progress deadline; {@link #abort}
 * from any thread closes every socket and wakes the loop at once.
 */
public final class Transport {
    public final long generation;
    public final int rank;
    public final int size;
    public final ByteBuffer staging;
    private final LinkWatch watch;
    private final IdleStrategy idle = new IdleStrategy();
    private final PeerLoss loss;
    private final FramePump pump;
    /** A socket link's bytes (or end) woke the owner's {@link #awaitIncoming}; mapped wake-ups do not count. */
    private boolean ownerIncoming;
    private final Consumer<SelectionKey> markOwnerIncoming = k -> ownerIncoming |= !LinkWatch.mapped(k);
    /** The same for {@link #idleWait}, on its own thread. */
    private boolean idleIncoming;
    private final Consumer<SelectionKey> markIdleIncoming = k -> idleIncoming |= !LinkWatch.mapped(k);
    /**
     * Threads inside a method that touches the links' mapped memory, plus {@link #RELEASED} once the segments may be
     * unmapped: unmapping memory a thread still reads would crash the process, so it waits for them to leave.
     */
    private final AtomicInteger users = new AtomicInteger();
    private static final int RELEASED = 1 << 30;
    private static final long RELEASE_POLL_NANOS = 1_000_000;
    private final List<AutoCloseable> released = new ArrayList<>();

    public Transport(long generation, int rank, int size, int chunkBytes, long progressTimeoutNanos) throws IOException {
        this.generation = generation;
        this.rank = rank;
        this.size = size;
        this.staging = ByteBuffer.allocateDirect(chunkBytes).order(ByteOrder.LITTLE_ENDIAN);
        this.watch = new LinkWatch(size);
        this.loss = new PeerLoss(watch, generation, rank, size);
        this.pump = new FramePump(watch, loss, idle, generation, progressTimeoutNanos, this::crashForTest);
    }

    /** Takes ownership of an established link and watches it with this transport's selectors. */
    public synchronized void add(Link link) throws IOException {
        if (watch.abortCause != null) {
            link.close();
            throw copy(watch.abortCause);
        }
        watch.add(link);
        idle.linkAdded(link.mapped != null);
    }

    /**
     * Runs the schedule to completion. {@code sendLink} and {@code recvLink} may be the same link.
     *
     * @throws WorkerLostException naming the peer whose connection closed, failed, stalled or misbehaved
     */
    public void run(Schedule s, Link sendLink, Link recvLink, long seq) {
        if (!enter()) {
            checkAbort();
            throw new WorkerLostException("the data connections of generation " + generation + " are released", -1, null);
        }
        try {
            pump.run(s, sendLink, recvLink, seq);
        } finally {
            exit();
        }
    }

    /**
     * Runs two schedules at once on disjoint links until one of them completes ({@link Lane}): an op's phases that
     * use different links overlap on its one thread, a hierarchical allreduce's ring within the host beside its
     * exchange across hosts.
     *
     * @throws WorkerLostException naming the peer whose connection closed, failed, stalled or misbehaved
     */
    public void runLanes(Lane a, Lane b, long seq) {
        if (!enter()) {
            checkAbort();
            throw new WorkerLostException("the data connections of generation " + generation + " are released", -1, null);
        }
        try {
            pump.runLanes(a, b, seq);
        } finally {
            exit();
        }
    }

    /** An op's wait for {@code culprit}'s socket, as the pump waits (for tests of the waits). */
    long park(Link culprit, long lastProgress, long seq) throws IOException {
        return pump.park(culprit, lastProgress, seq);
    }

    /**
     * Between ops, by the thread that owns the ring: waits up to {@code timeoutNanos} (0: only looks) for bytes
     * from any of {@code links}, which is how a rank learns that a peer has started the next op (or closed its
     * connection), or for {@link #wakeup}. Every other link's interest is cleared, so nothing else ends the wait.
     *
     * @return true when one of the links has bytes to read (or is closed)
     */
    public boolean awaitIncoming(Link[] links, long timeoutNanos) throws IOException {
        checkAbort();
        if (!enter()) {
            checkAbort();
            return false;
        }
        try {
            return awaitIncomingEntered(links, timeoutNanos);
        } finally {
            exit();
        }
    }

    private boolean awaitIncomingEntered(Link[] links, long timeoutNanos) throws IOException {
        if (LinkWatch.anyBuffered(links, links.length)) {
            return true;
        }
        for (int i = 0; i < watch.count; i++) {
            watch.links[i].interest(0);
        }
        for (Link l : links) {
            if (l != null) {
                l.interest(SelectionKey.OP_READ);
            }
        }
        ownerIncoming = false;
        boolean parks = timeoutNanos > 0;
        boolean ready = false;
        try {
            if (parks && watch.mapped) {
                watch.ownerParking = true;
                ready = LinkWatch.announce(links, links.length, 1);
            }
            if (ready) {
                return true;
            }
            if (parks) {
                watch.selector.select(markOwnerIncoming, Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
            } else {
                watch.selector.selectNow(markOwnerIncoming);
            }
        } catch (ClosedSelectorException | CancelledKeyException e) {
            checkAbort();
            throw e;
        } finally {
            if (parks && watch.mapped) {
                watch.ownerParking = false;
                LinkWatch.announce(links, links.length, -1);
            }
        }
        if (watch.mapped) {
            for (Link l : links) {
                if (l != null && l.mapped != null) {
                    watch.drainOwner(l);
                }
            }
            return ownerIncoming || LinkWatch.anyBuffered(links, links.length);
        }
        return ownerIncoming;
    }

    /**
     * Between ops, by a thread that does not own the ring: waits up to {@code timeoutNanos} for bytes on any
     * link (a peer started an op, or a connection ended) or for {@link #idleWakeup}. A message a TLS wire
     * already holds ends it at once: the socket would never report it, and the peer waits for our answer.
     * The wires are read without the ring's lock (see {@link #anyBufferedUnlocked}); an op running meanwhile
     * on another thread may only make this return early, which is harmless. On mapped links it announces
     * itself as the op's thread does and consumes the wake-ups it wakes for; if the op's thread parks meanwhile,
     * that one is woken to look again, since the wake-up it waited for may have been this one.
     *
     * @return true when a link has bytes to read (or is closed)
     */
    public boolean idleWait(long timeoutNanos) throws IOException {
        checkAbort();
        if (!enter()) {
            return false;
        }
        try {
            if (anyBufferedUnlocked()) {
                return true;
            }
            idleIncoming = false;
            boolean ready = false;
            try {
                if (watch.mapped) {
                    watch.idleWaiting = true;
                    ready = LinkWatch.announce(watch.links, watch.count, 1);
                }
                if (!ready) {
                    watch.idleSelector.select(markIdleIncoming,
                            Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
                }
            } catch (ClosedSelectorException | CancelledKeyException e) {
                checkAbort();
                throw e;
            } finally {
                if (watch.mapped) {
                    watch.idleWaiting = false;
                    LinkWatch.announce(watch.links, watch.count, -1);
                }
            }
            if (!watch.mapped) {
                return idleIncoming;
            }
            boolean woke = false;
            for (int i = 0; i < watch.count; i++) {
                Link l = watch.links[i];
                woke |= l.mapped != null && l.mapped.drainWakeups(watch.idleScratch);
            }
            if (woke && watch.ownerParking) {
                watch.selector.wakeup();
            }
            return idleIncoming || anyBufferedUnlocked();
        } finally {
            exit();
        }
    }

    /**
     * {@link LinkWatch#anyBuffered} from a thread that does not hold the ring: an op on another thread may move a
     * wire's buffers while they are looked at (a read then finds an index past a limit that just moved). That op is
     * reading the links anyway, so the answer is "look again": true.
     */
    private boolean anyBufferedUnlocked() {
        try {
            return LinkWatch.anyBuffered(watch.links, watch.count);
        } catch (IndexOutOfBoundsException e) {
            return true;
        }
    }

    /** Ends an {@link #awaitIncoming} (or an op's wait for its sockets) now, from any thread. */
    public void wakeup() {
        watch.selector.wakeup();
    }

    /** Ends an {@link #idleWait} now, from any thread. */
    public void idleWakeup() {
        watch.idleSelector.wakeup();
    }

    public void checkAbort() {
        watch.checkAbort();
    }

    /** Rank {@code peer} announced its close: a failure of its links from now on is that close, not a loss. */
    public void peerClosing(int peer) {
        loss.peerClosing(peer);
    }

    /** @return whether rank {@code peer} announced its close; any thread */
    public boolean closing(int peer) {
        return loss.closing(peer);
    }

    /**
     * Fails the generation: records the cause (first one wins), closes every socket so peers notice at once,
     * and wakes the op thread. Idempotent, any thread.
     *
     * @return the cause that stands (this one, or an earlier one)
     */
    public WorkerLostException abort(WorkerLostException cause) {
        Link[] toClose;
        int n;
        synchronized (this) {
            if (watch.abortCause != null) {
                return watch.abortCause;
            }
            watch.abortCause = cause;
            toClose = watch.links;
            n = watch.count;
        }
        for (int i = 0; i < n; i++) {
            toClose[i].close();
        }
        // A channel registered with a selector is only really closed when the selector lets go of it; until
        // then a peer writing to us would not notice. Closing the selector does that now (and wakes the op).
        closeSelector();
        return cause;
    }

    /** Sets how long waits poll before parking, and how: see {@link IdleStrategy}. */
    public void polling(long spinNanos, boolean yield, long spinFirstNanos) {
        idle.configure(spinNanos, yield, spinFirstNanos);
    }

    /** The next op moves about {@code bytes}: it polls or parks accordingly (on the op thread). */
    public void beginOp(long bytes) {
        idle.beginOp(bytes);
    }

    public WorkerLostException abortCause() {
        return watch.abortCause;
    }

    public void closeSelector() {
        watch.closeSelectors();
    }

    /** Test hook: this rank closes all its sockets abruptly once it has sent {@code frames} frames of an op. */
    public void crashAfterFrames(int frames) {
        pump.crashAfterFrames = frames;
    }

    private void crashForTest() {
        for (int i = 0; i < watch.count; i++) {
            try {
                watch.links[i].channel.setOption(java.net.StandardSocketOptions.SO_LINGER, 0); // RST, like a killed process
            } catch (IOException | RuntimeException ignored) {
                // closing anyway
            }
        }
        abort(new WorkerLostException("rank " + rank + " crashed (test fault injection)", rank, "localhost"));
    }

    /** Closes {@code resource} (a link's mapped memory) in {@link #release}, once no thread uses the links. */
    public synchronized void releaseWith(AutoCloseable resource) {
        released.add(resource);
    }

    /**
     * After an abort: waits up to {@code timeoutNanos} for every thread to leave the transport's methods, then
     * closes what {@link #releaseWith} registered (unmaps the shared memory). Should a thread not leave in time
     * (it cannot, once aborted, unless it hangs in a kernel call), the mappings are left to the garbage collector
     * rather than pulled from under it. @return whether everything was closed
     */
    public boolean release(long timeoutNanos) {
        if (users.getAndAdd(RELEASED) >= RELEASED) {
            users.addAndGet(-RELEASED);
            return true; // released before
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (users.get() != RELEASED) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(RELEASE_POLL_NANOS);
        }
        List<AutoCloseable> toClose;
        synchronized (this) {
            toClose = new ArrayList<>(released);
            released.clear();
        }
        toClose.forEach(Io::closeQuietly);
        return true;
    }

    /** A thread enters a method that may touch mapped memory. @return false once {@link #release}d: do not touch it */
    private boolean enter() {
        if (users.incrementAndGet() >= RELEASED) {
            users.decrementAndGet();
            return false;
        }
        return true;
    }

    private void exit() {
        users.decrementAndGet();
    }

    /** A fresh exception per throw, so each failed op has its own stack trace, same message and peer. */
    public static WorkerLostException copy(WorkerLostException cause) {
        return PeerLoss.copy(cause);
    }
}
