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
        long lastProgress = 0;
        boolean waiting = false;
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

    /** Parks until a wanted socket is ready, the deadline passes or the transport is aborted. */
    private long await(Link sendLink, boolean wantWrite, Link recvLink, boolean wantRead, long lastProgress, long seq)
            throws IOException {
        watch.clearInterestExcept(sendLink, recvLink);
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
        if (!watch.mapped) {
            return park(culprit, lastProgress, seq);
        }
        Link mappedSend = wantWrite && sendLink.mapped != null ? sendLink : null;
        Link mappedRecv = wantRead && recvLink.mapped != null ? recvLink : null;
        boolean socketWait = wantWrite && mappedSend == null || wantRead && mappedRecv == null;
        return parkMapped(culprit, lastProgress, seq, mappedSend, mappedRecv, socketWait);
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
        long waited = System.nanoTime() - lastProgress;
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
     * @return {@code lastProgress}, unchanged
     */
    long park(Link culprit, long lastProgress, long seq) throws IOException {
        long waited = System.nanoTime() - lastProgress;
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
