package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data connections of one generation, as Gloo's context holds its pairs: the ring neighbours' links, with
 * 4 or more ranks a direct link to every non-neighbour, and the {@link Transport} that pumps frames over them.
 * Obtained from {@link Endpoint#connect}; the collectives run over it; closed (or aborted) when the generation
 * ends.
 */
public final class PeerLinks {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLinks.class);
    /** Longest a closing ring waits for its threads to leave before its shared memory is unmapped. */
    static final long RELEASE_TIMEOUT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /** Told when these links close, so that whoever keeps the open rings forgets them. */
    private final Consumer<PeerLinks> onClose;
    /** 0 for the generation's own links, else the process set whose links these are. */
    private final int channel;
    private final List<PeerAddress> peers;
    private final Transport transport;
    private final Link left;
    private final Link right;
    private final Link[] sendLinks;
    private final Link[] recvLinks;
    private final List<Integer> sharedMemoryPeers;
    private final String transportLabel;

    PeerLinks(Consumer<PeerLinks> onClose, boolean tls, int channel, List<PeerAddress> peers, Transport transport,
            Link left, Link right, Link[] direct, List<Integer> sharedMemoryPeers) {
        this.onClose = onClose;
        this.channel = channel;
        this.peers = peers;
        this.transport = transport;
        this.left = left;
        this.right = right;
        this.sharedMemoryPeers = List.copyOf(sharedMemoryPeers);
        this.transportLabel = transportOf(transport.size, sharedMemoryPeers.size(), tls);
        int size = transport.size;
        this.sendLinks = new Link[size];
        this.recvLinks = new Link[size];
        if (size > 1) {
            sendLinks[right.peerRank] = right;
            recvLinks[left.peerRank] = left;
            // The neighbours' connections also serve the reverse direction (alltoall steps 1 and n-1).
            if (sendLinks[left.peerRank] == null) {
                sendLinks[left.peerRank] = left;
            }
            if (recvLinks[right.peerRank] == null) {
                recvLinks[right.peerRank] = right;
            }
        }
        for (int j = 0; j < size; j++) {
            if (direct[j] != null) {
                sendLinks[j] = direct[j];
                recvLinks[j] = direct[j];
            }
        }
    }

    /**
     * @return {@code shm} when every peer is reached through shared memory, {@code tcp} (or {@code tls}) when none is,
     *         {@code shm+tcp} (or {@code shm+tls}) when some are
     */
    public String transportLabel() {
        return transportLabel;
    }

    private static String transportOf(int size, int sharedPeers, boolean tls) {
        String network = tls ? "tls" : "tcp";
        return sharedPeers == 0 ? network : sharedPeers == size - 1 ? "shm" : "shm+" + network;
    }

    /** @return each rank's host (address), by rank: ranks of one host share an address */
    public List<String> hosts() {
        return peers.stream().map(PeerAddress::host).toList();
    }

    /** @return the ranks this rank reaches through shared memory (co-located, both with it on), in rank order */
    public List<Integer> sharedMemoryPeers() {
        return sharedMemoryPeers;
    }

    /** @return the frame pump over these links */
    public Transport transport() {
        return transport;
    }

    /** @return the link from rank - 1, or null in a generation of one */
    public Link left() {
        return left;
    }

    /** @return the link to rank + 1, or null in a generation of one */
    public Link right() {
        return right;
    }

    /** @return the link this rank sends to peer j on, indexed by rank (null for this rank) */
    public Link[] sendLinks() {
        return sendLinks;
    }

    /** @return the link this rank receives from peer j on, indexed by rank (null for this rank) */
    public Link[] recvLinks() {
        return recvLinks;
    }

    /** Closes the connections; later ops throw {@link WorkerLostException}. Idempotent. */
    public void close() {
        abortWith(new WorkerLostException("the ring of generation " + transport.generation + " is closed", -1, null));
        transport.closeSelector();
        transport.release(RELEASE_TIMEOUT_NANOS);
        onClose.accept(this);
    }

    /**
     * Between ops, on the op thread: waits up to {@code timeoutNanos} (0: only looks) for a peer to start the
     * next op, i.e. for bytes (or the end of a connection) from any peer, or for {@link Transport#wakeup()}.
     *
     * @return true when a peer has sent something; the next op (which must be the one it started) reads it
     * @throws WorkerLostException if the ring was aborted
     */
    public boolean awaitIncoming(long timeoutNanos) {
        checkOpen();
        if (transport.size == 1) {
            return false;
        }
        try {
            return transport.awaitIncoming(recvLinks, timeoutNanos);
        } catch (IOException e) {
            throw failed(new WorkerLostException("generation " + transport.generation + ": waiting for peers failed: " + e,
                    -1, null));
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * For a thread that does not run ops but must learn when a peer starts one: waits up to
     * {@code timeoutNanos} for bytes on any connection of the ring (or its end), or for {@link Transport#idleWakeup()}.
     * It may run beside an op on another thread (it then returns early, which is harmless).
     *
     * @return true when a connection has something to read
     * @throws WorkerLostException if the ring was aborted
     */
    public boolean idleWait(long timeoutNanos) {
        if (transport.size == 1) {
            checkOpen();
            return false;
        }
        try {
            return transport.idleWait(timeoutNanos);
        } catch (IOException e) {
            throw failed(new WorkerLostException("generation " + transport.generation + ": waiting for peers failed: " + e,
                    -1, null));
        }
    }

    /**
     * Aborts the generation from any thread: closes its connections (peers notice at once), wakes an op
     * blocked on this ring, which throws {@link WorkerLostException} with this reason, as does every later
     * op. Idempotent; the first cause wins.
     */
    public void abort(String reason) {
        abortWith(new WorkerLostException("generation " + transport.generation + " aborted: " + reason, -1, null));
    }

    /**
     * Like {@link #abort(String)}, keeping the control plane's cause: a {@link WorkerLostException} is thrown
     * as is (rank and host preserved) by the op in flight and every later one.
     */
    public void abort(KoloException cause) {
        Objects.requireNonNull(cause, "cause");
        WorkerLostException w = cause instanceof WorkerLostException wl ? wl
                : new WorkerLostException("generation " + transport.generation + " aborted: " + cause.getMessage(), -1, null);
        if (w != cause) {
            w.initCause(cause);
        }
        abortWith(w);
    }

    /** @return whether the ring was aborted or closed (by a failure, {@link #abort} or {@link #close}) */
    public boolean isAborted() {
        return transport.abortCause() != null;
    }

    private void abortWith(WorkerLostException cause) {
        if (transport.abort(cause) == cause && cause.lostRank() >= 0) {
            if (transport.closing(cause.lostRank())) {
                LOG.info("data plane: rank {} ends generation {}: {}", transport.rank, transport.generation, cause.getMessage());
            } else {
                LOG.warn("data plane: rank {} aborts generation {}: {}", transport.rank, transport.generation, cause.getMessage());
            }
        }
    }

    /**
     * What an op that threw {@code e} must rethrow: the abort's cause when the ring was aborted under it; a
     * lost peer, after aborting the ring with it; anything else (a bug or bad argument in the middle of an op,
     * which leaves the streams out of step) thrown as is, after aborting the ring.
     */
    public KoloException failed(RuntimeException e) {
        WorkerLostException aborted = transport.abortCause();
        if (aborted != null && !(e instanceof WorkerLostException)) {
            // Aborted from another thread while this op ran: what broke under it (a buffer reset, a channel
            // closed mid-call) is the abort's doing, and the abort's reason is what the caller must see.
            return Transport.copy(aborted);
        }
        if (e instanceof WorkerLostException w) {
            abortWith(w);
            return w;
        }
        // A bug or bad argument in the middle of an op leaves the streams out of step: abort as well.
        abortWith(new WorkerLostException("generation " + transport.generation + " aborted after an internal error: " + e,
                -1, null));
        throw e;
    }

    /** @throws WorkerLostException if the ring was aborted or closed */
    public void checkOpen() {
        WorkerLostException cause = transport.abortCause();
        if (cause != null) {
            throw Transport.copy(cause);
        }
    }
}
