package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Pumps a {@link Schedule}'s frames over non-blocking wires on the calling thread. One loop pumps the send and the
 * receive stream alternately, so both directions of the ring stay busy (the kernel keeps receiving into the socket
 * buffer while this thread reduces), and it waits only when neither can move: it polls as its {@link IdleStrategy}
 * says, then parks in the op's selector, until the progress deadline. No thread hand-off on the critical path, which
 * is what keeps small-op latency low, and no allocation per op or per chunk. A failure is named by {@link PeerLoss}.
 */
final class FramePump {
    private static final Consumer<SelectionKey> IGNORE = k -> { };
    /**
     * The time of the last progress while the op is not waiting: the wait's first look at the clock stands for it,
     * so that the first turn of a wait reads the clock once, not twice. No reading of {@link System#nanoTime} a wait
     * makes is this value in practice (it is 292 years from any other).
     */
    private static final long NOT_WAITING = Long.MIN_VALUE;

    private final LinkWatch watch;
    private final PeerLoss loss;
    private final IdleStrategy idle;
    private final long generation;
    private final long progressTimeoutNanos;
    /** Test hook: after this many frames sent by one op, the rank "crashes" ({@link #crash}). */
    volatile int crashAfterFrames = -1;
    /** Closes all sockets abruptly, as a killed process would, for the test hook. */
    private final Runnable crash;

    FramePump(LinkWatch watch, PeerLoss loss, IdleStrategy idle, long generation, long progressTimeoutNanos,
            Runnable crash) {
        this.watch = watch;
        this.loss = loss;
        this.idle = idle;
        this.generation = generation;
        this.progressTimeoutNanos = progressTimeoutNanos;
        this.crash = crash;
    }

    /** Runs the schedule to completion. {@code sendLink} and {@code recvLink} may be the same link. */
    void run(Schedule s, Link sendLink, Link recvLink, long seq) {
        int sent = 0;
        int received = 0;
        boolean writing = false;
        boolean reading = false;
        boolean writeBlocked = false;
        int crashAfter = crashAfterFrames;
        // The progress deadline and the spin window count from the first look that found nothing to do after the
        // last progress: the clock is read only when the op waits (a reading costs 25 ns; a small op, 1 us).
        long lastProgress = NOT_WAITING;
        Link current = recvLink;
        try {
            while (sent < s.sendUnits || received < s.recvUnits) {
                watch.checkAbort();
                boolean progressed = false;
                // The send first: a look at the peer's empty ring before it would pull the line of the peer's cursor
                // to this core just as the peer writes it, and delay this rank's own frame (probes on a 4-byte round at
                // np 2 over shared memory, from the start to the frame sent: 220 ns receiving first, 160 sending first).
                if (sent < s.sendUnits && (writing || s.sendReady(sent, received))) {
                    current = sendLink;
                    FrameWriter out = sendLink.out;
                    if (!writing) {
                        if (sent == crashAfter) {
                            crash.run();
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
                        throw loss.lost(recvLink, "closed the connection", seq, null);
                    }
                    if (n > 0) {
                        progressed = true;
                    }
                    if (in.headerComplete()) {
                        int noticed = in.noticedLostRank(generation);
                        if (noticed != Frame.NOT_A_NOTICE) {
                            throw loss.noticedLoss(recvLink, noticed, seq);
                        }
                        // Checked before the payload is used (reduced, or counted as received).
                        String mismatch = in.check(generation, seq, received);
                        if (mismatch != null) {
                            throw loss.protocolError(recvLink, mismatch);
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
                    lastProgress = NOT_WAITING;
                } else {
                    lastProgress = await(sendLink, writing && writeBlocked, recvLink, received < s.recvUnits,
                            lastProgress, seq);
                }
            }
        } catch (IOException e) {
            WorkerLostException named = loss.noticeOn(current, seq);
            if (named == null && current == sendLink && recvLink != sendLink) {
                named = loss.noticeOn(recvLink, seq); // the upstream peer may know more: its notice came first
            }
            throw loss.tellPeers(named != null ? named : loss.lostOrAborted(current, e, seq));
        } catch (RingProtocolException e) {
            throw loss.tellPeers(e);
        } catch (WorkerLostException e) {
            // A connection closed, stalled or was aborted. A closed upstream may have gone because the rank this
            // one sends to was lost first: that rank's notice, if it left one, names the rank to report.
            WorkerLostException named = current == recvLink && sendLink != recvLink ? loss.noticeOn(sendLink, seq) : null;
            throw loss.tellPeers(named != null ? named : e);
        } catch (ClosedSelectorException | CancelledKeyException e) {
            // Only abort closes the selector or cancels keys: report its cause.
            WorkerLostException cause = watch.abortCause;
            throw cause != null ? PeerLoss.copy(cause) : loss.lost(current, "was closed (" + e + ")", seq, e);
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

    /** The link a lane last touched: the one a failure is blamed on. */
    private Link laneLink;

    /**
     * Pumps two lanes at once until one of them completes its schedule (zero units: at once) and returns; the other
     * keeps its state for the next call. The lanes' links are disjoint, and at most one lane's are mapped memory (a
     * wait announces itself on one mapped send and one mapped receive, as {@link #run}'s does). A failure abandons
     * both lanes' schedules.
     */
    void runLanes(Lane a, Lane b, long seq) {
        if (!a.busy() && !b.busy()) {
            throw new IllegalStateException("neither lane runs a schedule");
        }
        if (mapped(a) && mapped(b)) {
            throw new IllegalArgumentException("at most one lane may run on mapped links");
        }
        int crashAfter = crashAfterFrames;
        long lastProgress = NOT_WAITING;
        laneLink = a.busy() ? a.recv : b.recv;
        try {
            while (true) {
                if (a.busy() && a.complete()) {
                    a.finish();
                    return;
                }
                if (b.busy() && b.complete()) {
                    b.finish();
                    return;
                }
                watch.checkAbort();
                boolean progressed = a.busy() && step(a, crashAfter, seq);
                progressed |= b.busy() && step(b, crashAfter, seq);
                lastProgress = progressed ? NOT_WAITING : awaitLanes(a, b, lastProgress, seq);
            }
        } catch (IOException e) {
            abandon(a, b);
            WorkerLostException named = firstNotice(seq);
            throw loss.tellPeers(named != null ? named : loss.lostOrAborted(laneLink, e, seq));
        } catch (WorkerLostException e) { // a protocol error too
            abandon(a, b);
            boolean blamesMessenger = !(e instanceof RingProtocolException) && laneLink != null
                    && e.lostRank() == laneLink.peerRank;
            WorkerLostException named = blamesMessenger ? firstNotice(seq) : null;
            throw loss.tellPeers(named != null ? named : e);
        } catch (ClosedSelectorException | CancelledKeyException e) {
            abandon(a, b);
            WorkerLostException cause = watch.abortCause;
            throw cause != null ? PeerLoss.copy(cause) : loss.lost(laneLink, "was closed (" + e + ")", seq, e);
        } catch (RuntimeException | Error e) {
            abandon(a, b);
            throw e;
        }
    }

    /**
     * The rank lost first, from an abort notice on the failed link or on any other link of the generation: with two
     * lanes, the rank that names the loss may be the one on the other lane (the peer across hosts told of a loss on
     * its host, while the neighbour within this host only closed its links). Reads a header per link, without waiting.
     */
    private WorkerLostException firstNotice(long seq) {
        WorkerLostException named = loss.noticeOn(laneLink, seq);
        for (int i = 0; named == null && i < watch.count; i++) {
            if (watch.links[i] != laneLink) {
                named = loss.noticeOn(watch.links[i], seq);
            }
        }
        return named;
    }

    private static boolean mapped(Lane l) {
        return l.busy() && (l.send != null && l.send.mapped != null || l.recv != null && l.recv.mapped != null);
    }

    private static void abandon(Lane a, Lane b) {
        if (a.busy()) {
            a.abandon();
        }
        if (b.busy()) {
            b.abandon();
        }
    }

    /** One turn of a lane's send and receive streams, as {@link #run}'s loop takes them. @return whether it moved */
    private boolean step(Lane l, int crashAfter, long seq) throws IOException {
        Schedule s = l.schedule;
        boolean progressed = false;
        if (l.sent < s.sendUnits && (l.writing || s.sendReady(l.sent, l.received))) {
            laneLink = l.send;
            FrameWriter out = l.send.out;
            if (!l.writing) {
                if (l.sent == crashAfter) {
                    crash.run();
                }
                s.beginSend(l.sent, out, generation, seq);
                l.writing = true;
            }
            long n = out.pump(l.send.wire);
            l.writeBlocked = n == 0;
            progressed = n > 0;
            if (!out.busy()) {
                l.sent++;
                l.writing = false;
            }
        }
        if (l.received < s.recvUnits) {
            laneLink = l.recv;
            FrameReader in = l.recv.in;
            if (!l.reading) {
                s.beginRecv(l.received, in);
                l.reading = true;
            }
            long n = in.pump(l.recv.wire);
            if (n < 0) {
                throw loss.lost(l.recv, "closed the connection", seq, null);
            }
            progressed |= n > 0;
            if (in.headerComplete()) {
                int noticed = in.noticedLostRank(generation);
                if (noticed != Frame.NOT_A_NOTICE) {
                    throw loss.noticedLoss(l.recv, noticed, seq);
                }
                String mismatch = in.check(generation, seq, l.received);
                if (mismatch != null) {
                    throw loss.protocolError(l.recv, mismatch);
                }
            }
            if (!in.busy()) {
                s.received(l.received);
                in.release();
                l.received++;
                l.reading = false;
                progressed = true;
            }
        }
        return progressed;
    }

    /** {@link #await} for two lanes: parks until a link either lane waits for is ready, or the deadline passes. */
    private long awaitLanes(Lane a, Lane b, long lastProgress, long seq) throws IOException {
        boolean aWrite = a.busy() && a.writing && a.writeBlocked;
        boolean aRead = a.busy() && a.received < a.schedule.recvUnits;
        boolean bWrite = b.busy() && b.writing && b.writeBlocked;
        boolean bRead = b.busy() && b.received < b.schedule.recvUnits;
        Link as = a.busy() ? a.send : null;
        Link ar = a.busy() ? a.recv : null;
        Link bs = b.busy() ? b.send : null;
        Link br = b.busy() ? b.recv : null;
        watch.clearInterestExcept(as, ar, bs, br);
        if (a.busy()) {
            interest(as, aWrite, ar, aRead);
        }
        if (b.busy()) {
            interest(bs, bWrite, br, bRead);
        }
        Link culprit = aWrite ? as : bWrite ? bs : aRead ? ar : bRead ? br : as != null ? as : bs;
        if (!watch.mapped) {
            return park(culprit, lastProgress, seq);
        }
        Link mappedSend = aWrite && as.mapped != null ? as : bWrite && bs.mapped != null ? bs : null;
        Link mappedRecv = aRead && ar.mapped != null ? ar : bRead && br.mapped != null ? br : null;
        boolean socketWait = aWrite && as.mapped == null || aRead && ar.mapped == null || bWrite && bs.mapped == null
                || bRead && br.mapped == null;
        return parkMapped(culprit, lastProgress, seq, mappedSend, mappedRecv, socketWait);
    }

    /** Parks until a wanted socket is ready, the deadline passes or the transport is aborted. */
    private long await(Link sendLink, boolean wantWrite, Link recvLink, boolean wantRead, long lastProgress, long seq)
            throws IOException {
        watch.clearInterestExcept(sendLink, recvLink);
        interest(sendLink, wantWrite, recvLink, wantRead);
        // Blame the peer we wait for: the right one if it stopped draining our writes, else the left one.
        Link culprit = wantWrite || recvLink == null ? sendLink : recvLink;
        if (!watch.mapped) {
            return park(culprit, lastProgress, seq);
        }
        Link mappedSend = wantWrite && sendLink.mapped != null ? sendLink : null;
        Link mappedRecv = wantRead && recvLink.mapped != null ? recvLink : null;
        boolean socketWait = wantWrite && mappedSend == null || wantRead && mappedRecv == null;
        return parkMapped(culprit, lastProgress, seq, mappedSend, mappedRecv, socketWait);
    }

    /** Sets the interest a wait needs on one schedule's links (they may be the same link). */
    private static void interest(Link sendLink, boolean wantWrite, Link recvLink, boolean wantRead) {
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
    }

    /**
     * The socket readiness a wait needs: for a mapped wire, readable (a wake-up or the peer's end) whichever way it
     * waits, since its bytes and its room are in the mapped memory.
     */
    private static int interestOf(Link l, boolean write, boolean read) {
        if (l.mapped != null) {
            return write || read ? SelectionKey.OP_READ : 0;
        }
        return (write ? SelectionKey.OP_WRITE : 0) | (read ? SelectionKey.OP_READ : 0);
    }

    /**
     * {@link #park} when the op waits on mapped wires: once polling is over, it announces the wait in their memory and
     * looks once more before it parks (a peer that moves a cursor after the announcement rings the doorbell), and
     * consumes the wake-ups afterwards.
     */
    private long parkMapped(Link culprit, long lastProgress, long seq, Link mappedSend, Link mappedRecv,
            boolean socketWait) throws IOException {
        if (mappedSend == null && mappedRecv == null) {
            return park(culprit, lastProgress, seq);
        }
        long now = System.nanoTime();
        if (lastProgress == NOT_WAITING) {
            lastProgress = now;
        }
        long waited = now - lastProgress;
        if (idle.poll(waited, socketWait)) {
            return lastProgress; // decided on this one reading of the clock: a park must announce itself first
        }
        if (waited >= progressTimeoutNanos) {
            throw loss.lost(culprit, "made no progress for " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms", seq, null);
        }
        watch.ownerParking = true;
        boolean ready = false;
        try {
            if (mappedSend != null) {
                ready = mappedSend.mapped.waitForRoom(1);
            }
            if (mappedRecv != null) {
                ready |= mappedRecv.mapped.waitForBytes(1);
            }
            if (!ready && !watch.readAhead()) {
                select(progressTimeoutNanos - waited);
            }
        } finally {
            watch.ownerParking = false;
            if (mappedSend != null) {
                mappedSend.mapped.waitForRoom(-1);
            }
            if (mappedRecv != null) {
                mappedRecv.mapped.waitForBytes(-1);
            }
            watch.drainOwner(mappedSend);
            if (mappedRecv != mappedSend) {
                watch.drainOwner(mappedRecv);
            }
        }
        return lastProgress;
    }

    /**
     * Waits for a socket whose interest the caller has set: polls for a while after the last progress (the peer's
     * bytes are usually microseconds away; a parked thread takes tens to wake), then parks in the selector until one
     * is ready, the progress deadline passes or the transport is aborted.
     *
     * @param culprit the link to blame when nothing moves before the deadline
     * @param lastProgress when the wait started, or {@link #NOT_WAITING} on its first turn
     * @return when the wait started: {@code lastProgress}, or this turn's reading of the clock on the first
     */
    long park(Link culprit, long lastProgress, long seq) throws IOException {
        long now = System.nanoTime();
        if (lastProgress == NOT_WAITING) {
            lastProgress = now;
        }
        long waited = now - lastProgress;
        if (idle.poll(waited, true)) {
            return lastProgress;
        }
        if (waited >= progressTimeoutNanos) {
            throw loss.lost(culprit, "made no progress for " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms", seq, null);
        }
        if (watch.readAhead()) {
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
            watch.selector.select(IGNORE, Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos) + 1));
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
