package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Moves a {@link Schedule}'s frames over non-blocking sockets on the calling thread. One loop pumps the
 * send and the receive stream alternately, so both directions of the ring stay busy (the kernel keeps
 * receiving into the socket buffer while this thread reduces), and it parks in the selector only when
 * neither can move. No thread hand-off on the critical path, which is what keeps small-op latency low, and
 * no allocation per op or per chunk.
 *
 * <p>Deadlines: the selector wait is bounded by the time left before the progress deadline; {@link #abort}
 * from any thread closes every socket and wakes the loop at once.
 */
public final class Transport {
    private static final Consumer<SelectionKey> IGNORE = k -> { };

    public final long generation;
    public final int rank;
    public final int size;
    public final ByteBuffer staging;
    private final Selector selector;
    /**
     * Watches every link for incoming bytes while no op runs, for a thread that waits without owning the ring
     * (the worker's collective thread while a caller may drive ops): separate from {@link #selector}, so the
     * two never contend for one selector and its interest sets are never changed under it.
     */
    private final Selector idleSelector;
    private final long progressTimeoutNanos;
    private volatile WorkerLostException abortCause;
    /** Peers that announced their close (rare, read only when a link fails). */
    private final java.util.Set<Integer> closingPeers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Test hook: after this many frames sent by one op, the rank "crashes" (closes all sockets abruptly). */
    public volatile int crashAfterFrames = -1;

    private final Link[] links; // every link of this generation, for abort
    private int linkCount;
    /** How long a wait polls after the last progress before it parks; 0 parks at once. */
    private volatile long spinNanos;
    /** The polling time of the op in progress: {@link #spinNanos}, or 0 for a bulk op when ranks share cores. */
    private long opSpinNanos;
    /**
     * Largest op that polls when ranks share cores and some link is a socket. Above it the waits are for the kernel
     * to copy bulk data, and a rank that polls takes the core its peers need for exactly that (measured at np 4 on 2
     * cores over TCP: 64 MiB busbw 0.78 GB/s polling, 1.22 parking).
     */
    static final long SHARED_POLL_MAX_BYTES = 1 << 20;
    /**
     * Every link is shared memory: the peers copy their bytes themselves, so a rank that polls takes nothing the
     * kernel needs, and bulk ops poll as small ones do (measured at np 2 and 4 on 2 cores: 1-64 MiB 10-30% faster
     * than parking at once).
     */
    private boolean onlyShared = true;
    /** Poll by yielding the core (ranks outnumber cores) rather than by spinning on it. */
    private volatile boolean yieldWhilePolling;
    /** While yielding, the first nanoseconds of each wait spin all the same (each rank has a core of its own). */
    private volatile long spinFirstNanos;
    /** A socket link's bytes (or end) woke the owner's {@link #awaitIncoming}; shared-memory wake-ups do not count. */
    private boolean ownerIncoming;
    private final Consumer<SelectionKey> markOwnerIncoming = k -> ownerIncoming |= !sharedMemory(k);
    /** The same for {@link #idleWait}, on its own thread. */
    private boolean idleIncoming;
    private final Consumer<SelectionKey> markIdleIncoming = k -> idleIncoming |= !sharedMemory(k);
    /** Whether some link runs over shared memory: only then do waits announce themselves and drain wake-ups. */
    private boolean sharedLinks;
    /** The op's thread is parked (or about to) on shared-memory links: a wake-up the idle thread took is its too. */
    private volatile boolean ownerParking;
    /** The idle thread waits on shared-memory links: a wake-up the op's thread took may have been its. */
    private volatile boolean idleWaiting;
    /** Where each thread reads the wake-up bytes it discards. */
    private final ByteBuffer ownerScratch = ByteBuffer.allocateDirect(64);
    private final ByteBuffer idleScratch = ByteBuffer.allocateDirect(64);
    /**
     * Threads inside a method that touches the links' shared memory, plus {@link #RELEASED} once the segments may be
     * unmapped: unmapping memory a thread still reads would crash the process, so it waits for them to leave.
     */
    private final java.util.concurrent.atomic.AtomicInteger users = new java.util.concurrent.atomic.AtomicInteger();
    private static final int RELEASED = 1 << 30;

    public Transport(long generation, int rank, int size, int chunkBytes, long progressTimeoutNanos) throws IOException {
        this.generation = generation;
        this.rank = rank;
        this.size = size;
        this.progressTimeoutNanos = progressTimeoutNanos;
        this.staging = ByteBuffer.allocateDirect(chunkBytes).order(ByteOrder.LITTLE_ENDIAN);
        this.selector = Selector.open();
        this.idleSelector = Selector.open();
        this.links = new Link[2 * size];
    }

    /** Takes ownership of an established link and watches it with this transport's selector. */
    public synchronized void add(Link link) throws IOException {
        if (abortCause != null) {
            link.close();
            throw copy(abortCause);
        }
        link.channel.configureBlocking(false);
        link.registered(link.channel.register(selector, 0, link));
        link.channel.register(idleSelector, SelectionKey.OP_READ, link);
        links[linkCount++] = link;
        sharedLinks |= link.mapped != null;
        onlyShared &= link.mapped != null;
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
            pump(s, sendLink, recvLink, seq);
        } finally {
            exit();
        }
    }

    private void pump(Schedule s, Link sendLink, Link recvLink, long seq) {
        int sent = 0;
        int received = 0;
        boolean writing = false;
        boolean reading = false;
        boolean writeBlocked = false;
        int crashAfter = crashAfterFrames;
        // The progress deadline and the spin window count from the first look that found nothing to do after the
        // last progress: the clock is read only when the op waits (a reading costs 25 ns; a small op, 1 us).
        long lastProgress = 0;
        boolean waiting = false;
        Link current = recvLink;
        try {
            while (sent < s.sendUnits || received < s.recvUnits) {
                checkAbort();
                boolean progressed = false;
                // The send first: a look at the peer's empty ring before it would pull the line of the peer's cursor
                // to this core just as the peer writes it, and delay this rank's own frame (probes on a 4-byte round at
                // np 2 over shared memory, from the start to the frame sent: 220 ns receiving first, 160 sending first).
                if (sent < s.sendUnits && (writing || s.sendReady(sent, received))) {
                    current = sendLink;
                    FrameWriter out = sendLink.out;
                    if (!writing) {
                        if (sent == crashAfter) {
                            crashForTest();
                        }
                        s.beginSend(sent, out, generation, seq);
                        writing = true;
                    }
                    long n = out.pump(sendLink.wire);
                    writeBlocked = n == 0;
                    if (n > 0) {
                        progressed = true;
                    }
                    if (!out.busy()) {
                        sent++;
                        writing = false;
                    }
                }
                if (received < s.recvUnits) {
                    current = recvLink;
                    FrameReader in = recvLink.in;
                    if (!reading) {
                        s.beginRecv(received, in);
                        reading = true;
                    }
                    long n = in.pump(recvLink.wire);
                    if (n < 0) {
                        throw lost(recvLink, "closed the connection", seq, null);
                    }
                    if (n > 0) {
                        progressed = true;
                    }
                    if (in.headerComplete()) {
                        int noticed = in.noticedLostRank(generation);
                        if (noticed != Frame.NOT_A_NOTICE) {
                            throw noticedLoss(recvLink, noticed, seq);
                        }
                        // Checked before the payload is used (reduced, or counted as received).
                        String mismatch = in.check(generation, seq, received);
                        if (mismatch != null) {
                            throw new RingProtocolException("data-plane protocol error from rank " + recvLink.peerRank
                                    + " (" + recvLink.peerHost + ") in generation " + generation + ": " + mismatch,
                                    recvLink.peerRank, recvLink.peerHost);
                        }
                    }
                    if (!in.busy()) {
                        s.received(received);
                        in.release();
                        received++;
                        reading = false;
                        progressed = true; // a payload used in place completes its frame without a byte read now
                    }
                }
                if (progressed) {
                    waiting = false;
                } else {
                    if (!waiting) {
                        lastProgress = System.nanoTime();
                        waiting = true;
                    }
                    lastProgress = await(sendLink, writing && writeBlocked, recvLink, received < s.recvUnits,
                            lastProgress, seq);
                }
            }
        } catch (IOException e) {
            WorkerLostException named = noticeOn(current, seq);
            if (named == null && current == sendLink && recvLink != sendLink) {
                named = noticeOn(recvLink, seq); // the upstream peer may know more: its notice came first
            }
            throw tellPeers(named != null ? named : lostOrAborted(current, e, seq));
        } catch (RingProtocolException e) {
            throw tellPeers(e);
        } catch (WorkerLostException e) {
            // A connection closed, stalled or was aborted. A closed upstream may have gone because the rank this
            // one sends to was lost first: that rank's notice, if it left one, names the rank to report.
            WorkerLostException named = current == recvLink && sendLink != recvLink ? noticeOn(sendLink, seq) : null;
            throw tellPeers(named != null ? named : e);
        } catch (ClosedSelectorException | CancelledKeyException e) {
            // Only abort closes the selector or cancels keys: report its cause.
            WorkerLostException cause = abortCause;
            throw cause != null ? copy(cause) : lost(current, "was closed (" + e + ")", seq, e);
        } finally {
            if (sendLink != null) {
                sendLink.out.reset();
            }
            if (recvLink != null) {
                recvLink.in.reset();
                if (recvLink.mapped != null) {
                    recvLink.mapped.streaming();
                }
            }
        }
    }

    /**
     * Before this rank's failed op aborts the generation: tells each peer which rank was lost, so that a peer
     * which learns of the failure only because this rank's connections close names that rank rather than this
     * one. A frame cut short is finished first (a notice can only follow a whole frame), the whole within
     * {@link #NOTICE_DEADLINE_NANOS}; a peer that cannot take it learns from the closed connection. Nothing is
     * told when the generation was aborted already: the abort closed the connections.
     *
     * @return {@code cause}
     */
    private WorkerLostException tellPeers(WorkerLostException cause) {
        if (abortCause != null) {
            return cause;
        }
        long deadline = System.nanoTime() + NOTICE_DEADLINE_NANOS;
        for (int i = 0; i < linkCount; i++) {
            Link l = links[i];
            if (l.peerRank != cause.lostRank()) {
                try {
                    l.out.notice(l.wire, generation, cause.lostRank(), deadline);
                } catch (IOException | RuntimeException ignored) {
                    // that peer is gone or going too: it learns from the closed connection
                }
            }
        }
        return cause;
    }

    /** The longest a failed op spends telling its peers why: a fraction of any progress timeout. */
    static final long NOTICE_DEADLINE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * A failed link's last words: when its stream is between frames (this rank's reader of it, that is) and the
     * next header already came, whether it is the peer's abort notice; the lost rank it names is then the one
     * to report. Reads a header at most, without waiting.
     *
     * @return the loss to report, or null when no notice can be read
     */
    private WorkerLostException noticeOn(Link link, long seq) {
        if (link == null || !link.in.betweenFrames()) {
            return null;
        }
        FrameReader in = link.in;
        try {
            in.beginSlices(0);
            while (in.busy()) {
                if (in.pump(link.wire) <= 0) {
                    return null;
                }
            }
            int noticed = in.noticedLostRank(generation);
            return noticed == Frame.NOT_A_NOTICE ? null : noticedLoss(link, noticed, seq);
        } catch (IOException e) {
            return null;
        } finally {
            in.reset();
        }
    }

    /**
     * The peer on {@code link} sent an abort notice: its op failed because it lost {@code lostRank} (-1: it knew
     * no rank). That rank is the one to name, not the messenger, whose connections close next.
     */
    private WorkerLostException noticedLoss(Link link, int lostRank, long seq) {
        WorkerLostException cause = abortCause;
        if (cause != null) {
            return copy(cause);
        }
        String where = " during op " + seq + " of generation " + generation + " (this rank " + rank + " of " + size + ")";
        String from = "rank " + link.peerRank + " (" + link.peerHost + ")";
        if (lostRank < 0 || lostRank == rank) {
            return new WorkerLostException(from + " aborted generation " + generation + " after its op failed" + where,
                    -1, null);
        }
        String host = hostOf(lostRank);
        return new WorkerLostException("rank " + lostRank + (host != null ? " (" + host + ")" : "") + " was lost: "
                + from + " aborted its op for that loss" + where, lostRank, host);
    }

    /** @return the host of {@code peerRank} if this rank has a connection to it, else null */
    private String hostOf(int peerRank) {
        for (int i = 0; i < linkCount; i++) {
            if (links[i].peerRank == peerRank) {
                return links[i].peerHost;
            }
        }
        return null;
    }

    /** Parks until a wanted socket is ready, the deadline passes or the transport is aborted. */
    private long await(Link sendLink, boolean wantWrite, Link recvLink, boolean wantRead, long lastProgress, long seq)
            throws IOException {
        // Links not involved now must not wake us: a level-triggered readiness left over from an earlier
        // wait (a frame already queued for a later step) would turn this wait into a busy loop.
        for (int i = 0; i < linkCount; i++) {
            Link l = links[i];
            if (l != sendLink && l != recvLink) {
                l.interest(0);
            }
        }
        if (sendLink == recvLink) {
            sendLink.interest(interestOf(sendLink, wantWrite, wantRead));
        } else {
            if (sendLink != null) {
                sendLink.interest(interestOf(sendLink, wantWrite, false));
            }
            if (recvLink != null) {
                recvLink.interest(interestOf(recvLink, false, wantRead));
            }
        }
        // Blame the peer we wait for: the right one if it stopped draining our writes, else the left one.
        Link culprit = wantWrite || recvLink == null ? sendLink : recvLink;
        if (!sharedLinks) {
            return park(culprit, lastProgress, seq);
        }
        Link shmSend = wantWrite && sendLink.mapped != null ? sendLink : null;
        Link shmRecv = wantRead && recvLink.mapped != null ? recvLink : null;
        // A wait on shared memory alone polls even in a bulk op of a generation with sockets (a hierarchical
        // allreduce's phases within a host): no kernel copy needs the core.
        boolean socketWait = wantWrite && shmSend == null || wantRead && shmRecv == null;
        return parkShared(culprit, lastProgress, seq, shmSend, shmRecv, socketWait ? opSpinNanos : spinNanos);
    }

    /**
     * The socket readiness a wait needs: for a shared-memory wire, readable (a wake-up or the peer's end) whichever
     * way it waits, since its bytes and its room are in the rings.
     */
    private static int interestOf(Link l, boolean write, boolean read) {
        if (l.mapped != null) {
            return write || read ? SelectionKey.OP_READ : 0;
        }
        return (write ? SelectionKey.OP_WRITE : 0) | (read ? SelectionKey.OP_READ : 0);
    }

    /**
     * {@link #park} when the op waits on shared-memory wires: once polling ({@code spin}) is over, it announces
     * the wait in their rings and looks once more before it parks (a peer that moves a cursor after the
     * announcement rings the doorbell), and consumes the wake-ups afterwards.
     */
    private long parkShared(Link culprit, long lastProgress, long seq, Link shmSend, Link shmRecv, long spin)
            throws IOException {
        if (shmSend == null && shmRecv == null) {
            return park(culprit, lastProgress, seq);
        }
        long waited = System.nanoTime() - lastProgress;
        if (waited < spin) {
            poll(waited); // decided on this one reading of the clock: a park must announce itself first
            return lastProgress;
        }
        if (waited >= progressTimeoutNanos) {
            throw lost(culprit, "made no progress for " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms", seq, null);
        }
        ownerParking = true;
        boolean ready = false;
        try {
            if (shmSend != null) {
                ready = shmSend.mapped.waitForRoom(1);
            }
            if (shmRecv != null) {
                ready |= shmRecv.mapped.waitForBytes(1);
            }
            if (!ready && !readAhead()) {
                select(progressTimeoutNanos - waited);
            }
        } finally {
            ownerParking = false;
            if (shmSend != null) {
                shmSend.mapped.waitForRoom(-1);
            }
            if (shmRecv != null) {
                shmRecv.mapped.waitForBytes(-1);
            }
            drainOwner(shmSend);
            if (shmRecv != shmSend) {
                drainOwner(shmRecv);
            }
        }
        return lastProgress;
    }

    /** The op's thread consumes a shared-memory link's wake-ups; if it took the idle thread's, that one looks again. */
    private void drainOwner(Link l) {
        if (l != null && l.mapped != null && l.mapped.drainWakeups(ownerScratch) && idleWaiting) {
            idleSelector.wakeup();
        }
    }

    /**
     * Waits for a socket whose interest the caller has set: polls for {@link #spinNanos} after the last
     * progress (the peer's bytes are usually microseconds away; a parked thread takes tens to wake), then
     * parks in the selector until one is ready, the progress deadline passes or the transport is aborted.
     *
     * @param culprit the link to blame when nothing moves before the deadline
     * @return {@code lastProgress}, unchanged
     */
    public long park(Link culprit, long lastProgress, long seq) throws IOException {
        long waited = System.nanoTime() - lastProgress;
        if (waited < opSpinNanos) {
            poll(waited);
            return lastProgress;
        }
        if (waited >= progressTimeoutNanos) {
            throw lost(culprit, "made no progress for " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms", seq, null);
        }
        if (readAhead()) {
            return lastProgress; // the socket will not wake us for bytes a TLS wire already took off it
        }
        select(progressTimeoutNanos - waited);
        return lastProgress;
    }

    /** Parks in the op's selector for at most {@code nanos}. */
    private void select(long nanos) throws IOException {
        // An interrupted thread's select returns at once, so this wait would spin until the op ends: the op
        // cannot be left half done (the peers are in it), so the interrupt is held over the select and kept.
        boolean interrupted = Thread.interrupted();
        try {
            selector.select(IGNORE, Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos) + 1));
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @return whether a link the op waits to read from holds bytes in its wire (a TLS record read together
     *         with the previous one). The op's pumps read every such link before they park, so this is a
     *         guard for the parking wait alone: only links with read interest count, whose pumps consume what it
     *         reports, so it does not spin.
     */
    private boolean readAhead() {
        for (int i = 0; i < linkCount; i++) {
            Link l = links[i];
            if (l.wantsRead() && l.mapped == null && l.wire.hasBuffered()) {
                return true;
            }
        }
        return false;
    }

    /**
     * One step of a polling wait, {@code waited} nanoseconds into it: spin on the core, or give it up when the ranks
     * fill the cores (after {@link #spinFirstNanos}).
     */
    private void poll(long waited) {
        if (yieldWhilePolling && waited >= spinFirstNanos) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
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
        if (anyBuffered(links, links.length)) {
            return true;
        }
        for (int i = 0; i < linkCount; i++) {
            this.links[i].interest(0);
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
            if (parks && sharedLinks) {
                ownerParking = true;
                ready = announce(links, links.length, 1);
            }
            if (ready) {
                return true;
            }
            if (parks) {
                selector.select(markOwnerIncoming, Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
            } else {
                selector.selectNow(markOwnerIncoming);
            }
        } catch (ClosedSelectorException | CancelledKeyException e) {
            checkAbort();
            throw e;
        } finally {
            if (parks && sharedLinks) {
                ownerParking = false;
                announce(links, links.length, -1);
            }
        }
        if (sharedLinks) {
            for (Link l : links) {
                if (l != null && l.mapped != null) {
                    drainOwner(l);
                }
            }
            return ownerIncoming || anyBuffered(links, links.length);
        }
        return ownerIncoming;
    }

    /**
     * Raises (+1) or lowers (-1) the bytes-wait counters of the shared-memory links among {@code links[0, n)}.
     *
     * @return on raising, whether one of them has bytes (or its peer's end) already: then do not park
     */
    private static boolean announce(Link[] links, int n, int delta) {
        boolean ready = false;
        for (int i = 0; i < n; i++) {
            Link l = links[i];
            if (l != null && l.mapped != null) {
                ready |= l.mapped.waitForBytes(delta);
            }
        }
        return ready;
    }

    /**
     * Between ops, by a thread that does not own the ring: waits up to {@code timeoutNanos} for bytes on any
     * link (a peer started an op, or a connection ended) or for {@link #idleWakeup}. A message a TLS wire
     * already holds ends it at once: the socket would never report it, and the peer waits for our answer.
     * The wires are read without the ring's lock (see {@link #anyBufferedUnlocked}); an op running meanwhile
     * on another thread may only make this return early, which is harmless. On shared-memory links it announces
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
                if (sharedLinks) {
                    idleWaiting = true;
                    ready = announce(links, linkCount, 1);
                }
                if (!ready) {
                    idleSelector.select(markIdleIncoming, Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
                }
            } catch (ClosedSelectorException | CancelledKeyException e) {
                checkAbort();
                throw e;
            } finally {
                if (sharedLinks) {
                    idleWaiting = false;
                    announce(links, linkCount, -1);
                }
            }
            if (!sharedLinks) {
                return idleIncoming;
            }
            boolean woke = false;
            for (int i = 0; i < linkCount; i++) {
                woke |= links[i].mapped != null && links[i].mapped.drainWakeups(idleScratch);
            }
            if (woke && ownerParking) {
                selector.wakeup();
            }
            return idleIncoming || anyBufferedUnlocked();
        } finally {
            exit();
        }
    }

    /**
     * {@link #anyBuffered} from a thread that does not hold the ring: an op on another thread may move a wire's
     * buffers while they are looked at (a read then finds an index past a limit that just moved). That op is
     * reading the links anyway, so the answer is "look again": true.
     */
    private boolean anyBufferedUnlocked() {
        try {
            return anyBuffered(links, linkCount);
        } catch (IndexOutOfBoundsException e) {
            return true;
        }
    }

    /** @return whether a read of one of {@code links[0, n)} would deliver bytes its wire already holds */
    private static boolean anyBuffered(Link[] links, int n) {
        for (int i = 0; i < n; i++) {
            Link l = links[i];
            if (l != null && l.wire.hasBuffered()) {
                return true;
            }
        }
        return false;
    }

    /** Ends an {@link #awaitIncoming} (or an op's wait for its sockets) now, from any thread. */
    public void wakeup() {
        selector.wakeup();
    }

    /** Ends an {@link #idleWait} now, from any thread. */
    public void idleWakeup() {
        idleSelector.wakeup();
    }

    public void checkAbort() {
        WorkerLostException cause = abortCause;
        if (cause != null) {
            throw copy(cause);
        }
    }

    public WorkerLostException lostOrAborted(Link link, IOException e, long seq) {
        WorkerLostException cause = abortCause;
        if (cause != null) {
            return copy(cause);
        }
        if (e instanceof javax.net.ssl.SSLException) {
            // A record that fails to decrypt or verify: altered on the path, or not from the peer it claims.
            return lost(link, "broke TLS (" + e.getMessage() + "): its records were altered on the path or do not "
                    + "come from a worker holding a certificate of the job's KOLO_TLS_CA", seq, e);
        }
        return lost(link, "failed (" + e + ")", seq, e);
    }

    public WorkerLostException lost(Link link, String what, long seq, Throwable cause) {
        String where = " during op " + seq + " of generation " + generation + " (this rank " + rank + " of " + size + ")";
        WorkerLostException e = closing(link.peerRank)
                ? new WorkerLostException("rank " + link.peerRank + " (" + link.peerHost + ") closed (its program called "
                        + "close): its data connection ended" + where, link.peerRank, link.peerHost)
                : new WorkerLostException("data connection to rank " + link.peerRank + " (" + link.peerHost + ") "
                        + what + where, link.peerRank, link.peerHost);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** Rank {@code peer} announced its close: a failure of its links from now on is that close, not a loss. */
    public void peerClosing(int peer) {
        closingPeers.add(peer);
    }

    /** @return whether rank {@code peer} announced its close; any thread */
    public boolean closing(int peer) {
        return closingPeers.contains(peer);
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
            if (abortCause != null) {
                return abortCause;
            }
            abortCause = cause;
            toClose = links;
            n = linkCount;
        }
        for (int i = 0; i < n; i++) {
            toClose[i].close();
        }
        // A channel registered with a selector is only really closed when the selector lets go of it; until
        // then a peer writing to us would not notice. Closing the selector does that now (and wakes the op).
        closeSelector();
        return cause;
    }

    /**
     * Sets how long waits poll before parking, and how. Polling saves the wake-up of a parked thread (tens of
     * microseconds) but spinning steals the CPU a peer on the same core needs to produce what is waited for
     * (measured: 2-3x slower at np 4 on 2 cores): spin only when every rank on the host has a core of its own,
     * else yield the core while polling, after the first {@code spinFirstNanos} of each wait.
     */
    public void polling(long spinNanos, boolean yield, long spinFirstNanos) {
        this.spinNanos = Math.max(0, spinNanos);
        this.yieldWhilePolling = yield;
        this.spinFirstNanos = Math.max(0, spinFirstNanos);
        this.opSpinNanos = this.spinNanos;
    }

    /** The next op moves about {@code bytes}: it polls or parks accordingly (on the op thread). */
    public void beginOp(long bytes) {
        opSpinNanos = yieldWhilePolling && bytes > SHARED_POLL_MAX_BYTES && !onlyShared ? 0 : spinNanos;
    }

    public WorkerLostException abortCause() {
        return abortCause;
    }

    public void closeSelector() {
        Io.closeQuietly(selector);
        Io.closeQuietly(idleSelector);
    }

    /** Closes {@code resource} (a link's shared memory) in {@link #release}, once no thread uses the links. */
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
            java.util.concurrent.locks.LockSupport.parkNanos(RELEASE_POLL_NANOS);
        }
        java.util.List<AutoCloseable> toClose;
        synchronized (this) {
            toClose = new java.util.ArrayList<>(released);
            released.clear();
        }
        toClose.forEach(Io::closeQuietly);
        return true;
    }

    private static final long RELEASE_POLL_NANOS = 1_000_000;

    private final java.util.List<AutoCloseable> released = new java.util.ArrayList<>();

    /** A thread enters a method that may touch shared memory. @return false once {@link #release}d: do not touch it */
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

    private static boolean sharedMemory(SelectionKey k) {
        return k.attachment() instanceof Link l && l.mapped != null;
    }

    private void crashForTest() {
        for (int i = 0; i < linkCount; i++) {
            try {
                links[i].channel.setOption(java.net.StandardSocketOptions.SO_LINGER, 0); // RST, like a killed process
            } catch (IOException | RuntimeException ignored) {
                // closing anyway
            }
        }
        abort(new WorkerLostException("rank " + rank + " crashed (test fault injection)", rank, "localhost"));
    }

    /** A fresh exception per throw, so each failed op has its own stack trace, same message and peer. */
    public static WorkerLostException copy(WorkerLostException cause) {
        WorkerLostException e = cause instanceof RingProtocolException
                ? new RingProtocolException(cause.getMessage(), cause.lostRank(), cause.lostHost())
                : new WorkerLostException(cause.getMessage(), cause.lostRank(), cause.lostHost());
        e.initCause(cause);
        return e;
    }
}
