package dev.kolo.runtime.ring;

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
final class Transport {
    private static final Consumer<SelectionKey> IGNORE = k -> { };

    final long generation;
    final int rank;
    final int size;
    final ByteBuffer staging;
    private final Selector selector;
    private final long progressTimeoutNanos;
    private volatile WorkerLostException abortCause;
    /** Test hook: after this many frames sent by one op, the rank "crashes" (closes all sockets abruptly). */
    volatile int crashAfterFrames = -1;

    private final Link[] links; // every link of this generation, for abort
    private int linkCount;

    Transport(long generation, int rank, int size, int chunkBytes, long progressTimeoutNanos) throws IOException {
        this.generation = generation;
        this.rank = rank;
        this.size = size;
        this.progressTimeoutNanos = progressTimeoutNanos;
        this.staging = ByteBuffer.allocateDirect(chunkBytes).order(ByteOrder.LITTLE_ENDIAN);
        this.selector = Selector.open();
        this.links = new Link[2 * size];
    }

    /** Takes ownership of an established link and watches it with this transport's selector. */
    synchronized void add(Link link) throws IOException {
        if (abortCause != null) {
            link.close();
            throw copy(abortCause);
        }
        link.channel.configureBlocking(false);
        link.registered(link.channel.register(selector, 0));
        links[linkCount++] = link;
    }

    /**
     * Runs the schedule to completion. {@code sendLink} and {@code recvLink} may be the same link.
     *
     * @throws WorkerLostException naming the peer whose connection closed, failed, stalled or misbehaved
     */
    void run(Schedule s, Link sendLink, Link recvLink, long seq) {
        int sent = 0;
        int received = 0;
        boolean writing = false;
        boolean reading = false;
        boolean writeBlocked = false;
        int crashAfter = crashAfterFrames;
        long lastProgress = System.nanoTime();
        Link current = recvLink;
        try {
            while (sent < s.sendUnits || received < s.recvUnits) {
                checkAbort();
                boolean progressed = false;
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
                        received++;
                        reading = false;
                    }
                }
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
                if (progressed) {
                    lastProgress = System.nanoTime();
                } else {
                    // No spinning before parking: with several ranks per core, a spinning rank steals the CPU
                    // its peers need to produce what it waits for (measured: 2-3x slower at np 4 on 2 cores).
                    lastProgress = await(sendLink, writing && writeBlocked, recvLink, received < s.recvUnits,
                            lastProgress, seq);
                }
            }
        } catch (IOException e) {
            throw lostOrAborted(current, e, seq);
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
            }
        }
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
            sendLink.interest((wantWrite ? SelectionKey.OP_WRITE : 0) | (wantRead ? SelectionKey.OP_READ : 0));
        } else {
            if (sendLink != null) {
                sendLink.interest(wantWrite ? SelectionKey.OP_WRITE : 0);
            }
            if (recvLink != null) {
                recvLink.interest(wantRead ? SelectionKey.OP_READ : 0);
            }
        }
        long waited = System.nanoTime() - lastProgress;
        if (waited >= progressTimeoutNanos) {
            // Blame the peer we wait for: the right one if it stopped draining our writes, else the left one.
            Link culprit = wantWrite || recvLink == null ? sendLink : recvLink;
            throw lost(culprit, "made no progress for " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms", seq, null);
        }
        selector.select(IGNORE, Math.max(1, TimeUnit.NANOSECONDS.toMillis(progressTimeoutNanos - waited) + 1));
        return lastProgress;
    }

    private void checkAbort() {
        WorkerLostException cause = abortCause;
        if (cause != null) {
            throw copy(cause);
        }
    }

    private WorkerLostException lostOrAborted(Link link, IOException e, long seq) {
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

    WorkerLostException lost(Link link, String what, long seq, Throwable cause) {
        WorkerLostException e = new WorkerLostException("data connection to rank " + link.peerRank + " ("
                + link.peerHost + ") " + what + " during op " + seq + " of generation " + generation
                + " (this rank " + rank + " of " + size + ")", link.peerRank, link.peerHost);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /**
     * Fails the generation: records the cause (first one wins), closes every socket so peers notice at once,
     * and wakes the op thread. Idempotent, any thread.
     *
     * @return the cause that stands (this one, or an earlier one)
     */
    WorkerLostException abort(WorkerLostException cause) {
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

    WorkerLostException abortCause() {
        return abortCause;
    }

    void closeSelector() {
        Io.closeQuietly(selector);
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
    static WorkerLostException copy(WorkerLostException cause) {
        WorkerLostException e = cause instanceof RingProtocolException
                ? new RingProtocolException(cause.getMessage(), cause.lostRank(), cause.lostHost())
                : new WorkerLostException(cause.getMessage(), cause.lostRank(), cause.lostHost());
        e.initCause(cause);
        return e;
    }
}
