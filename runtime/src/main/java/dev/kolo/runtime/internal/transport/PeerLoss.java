package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Which rank a failed op lost, and how the others learn it. A rank whose op fails tells every peer which rank was
 * lost ({@link #tellPeers}: the abort notice) before its connections close; a rank that sees a connection fail reads
 * that connection for a notice first ({@link #noticeOn}), so that every survivor of a crash names the crashed rank,
 * not the neighbour whose connections closed in turn. A peer that announced its close ({@link #peerClosing}) is
 * reported as closed, not lost.
 */
final class PeerLoss {
    /** The longest a failed op spends telling its peers why: a fraction of any progress timeout. */
    static final long NOTICE_DEADLINE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final LinkWatch watch;
    private final long generation;
    private final int rank;
    private final int size;
    /** Peers that announced their close (rare, read only when a link fails). */
    private final Set<Integer> closingPeers = ConcurrentHashMap.newKeySet();

    PeerLoss(LinkWatch watch, long generation, int rank, int size) {
        this.watch = watch;
        this.generation = generation;
        this.rank = rank;
        this.size = size;
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
    WorkerLostException tellPeers(WorkerLostException cause) {
        if (watch.abortCause != null) {
            return cause;
        }
        long deadline = System.nanoTime() + NOTICE_DEADLINE_NANOS;
        for (int i = 0; i < watch.count; i++) {
            Link l = watch.links[i];
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

    /**
     * A failed link's last words: when its stream is between frames (this rank's reader of it, that is) and the
     * next header already came, whether it is the peer's abort notice; the lost rank it names is then the one
     * to report. Reads a header at most, without waiting.
     *
     * @return the loss to report, or null when no notice can be read
     */
    WorkerLostException noticeOn(Link link, long seq) {
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
    WorkerLostException noticedLoss(Link link, int lostRank, long seq) {
        WorkerLostException cause = watch.abortCause;
        if (cause != null) {
            return copy(cause);
        }
        String from = "rank " + link.peerRank + " (" + link.peerHost + ")";
        if (lostRank < 0 || lostRank == rank) {
            return new WorkerLostException(from + " aborted generation " + generation + " after its op failed"
                    + where(seq), -1, null);
        }
        String host = watch.hostOf(lostRank);
        return new WorkerLostException("rank " + lostRank + (host != null ? " (" + host + ")" : "") + " was lost: "
                + from + " aborted its op for that loss" + where(seq), lostRank, host);
    }

    /** A header that does not belong to the op: the peer runs another op, another generation, or other code. */
    RingProtocolException protocolError(Link link, String mismatch) {
        return new RingProtocolException("data-plane protocol error from rank " + link.peerRank + " (" + link.peerHost
                + ") in generation " + generation + ": " + mismatch, link.peerRank, link.peerHost);
    }

    WorkerLostException lostOrAborted(Link link, IOException e, long seq) {
        WorkerLostException cause = watch.abortCause;
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
        WorkerLostException e = closing(link.peerRank)
                ? new WorkerLostException("rank " + link.peerRank + " (" + link.peerHost + ") closed (its program called "
                        + "close): its data connection ended" + where(seq), link.peerRank, link.peerHost)
                : new WorkerLostException("data connection to rank " + link.peerRank + " (" + link.peerHost + ") "
                        + what + where(seq), link.peerRank, link.peerHost);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    private String where(long seq) {
        return " during op " + seq + " of generation " + generation + " (this rank " + rank + " of " + size + ")";
    }

    /** Rank {@code peer} announced its close: a failure of its links from now on is that close, not a loss. */
    void peerClosing(int peer) {
        closingPeers.add(peer);
    }

    /** @return whether rank {@code peer} announced its close; any thread */
    boolean closing(int peer) {
        return closingPeers.contains(peer);
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
