package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Transport;
import dev.kolo.runtime.internal.transport.Wire;
import dev.kolo.runtime.internal.transport.shm.SharedMemoryUpgrade;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One worker's data endpoint (Gloo's device): accepts data connections on the worker's listening socket for
 * its whole life, and connects one {@link PeerLinks} per generation. Knows nothing of the control plane: it is told the job, the
 * generation, this rank and every rank's address, once they are agreed.
 *
 * <p>Lifecycle: {@link #start} once at worker start-up with the bound data port; per generation
 * {@link #connect} on every rank (it returns once both ring neighbours are connected and have checked
 * each other), then ops over the links, then {@link PeerLinks#close()} (or an abort of its transport) when
 * the generation ends; {@link #close()} at shutdown.
 */
public final class Endpoint implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Endpoint.class);
    private final String job;
    private final TransportOptions options;
    private final ServerSocketChannel listener;
    private final PendingConnections pending = new PendingConnections();
    private final Acceptor acceptor;
    private final Set<PeerLinks> rings = ConcurrentHashMap.newKeySet();
    private final HandshakeAuth auth;

    private Endpoint(ServerSocketChannel listener, String job, TransportOptions options) throws IOException {
        this.listener = listener;
        this.job = job;
        this.options = options;
        byte[] key = options.authenticationKey();
        this.auth = key == null ? null : new HandshakeAuth(key);
        this.acceptor = new Acceptor(listener, job, pending, options.connectTimeout().toNanos(),
                options.socketBufferBytes(), auth, options.tls());
    }

    /**
     * Starts accepting data connections.
     *
     * @param listener bound listening socket of this worker's data port; the data plane switches it to
     *        non-blocking mode and closes it in {@link #close()}
     * @param job job name; connections of other jobs are refused
     */
    public static Endpoint start(ServerSocketChannel listener, String job, TransportOptions options) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(options, "options");
        try {
            Endpoint plane = new Endpoint(listener, job, options);
            plane.acceptor.start();
            return plane;
        } catch (IOException e) {
            throw new KoloException("cannot start the data plane: " + e.getMessage(), e);
        }
    }

    /** @return the options this endpoint's connections were made with */
    public TransportOptions options() {
        return options;
    }

    /** @return the local data port */
    public int port() {
        return listener.socket().getLocalPort();
    }

    /**
     * Connects the ring of a generation: to the right neighbour (rank + 1) and from the left one (rank - 1),
     * and, with 4 or more ranks, every pair of non-neighbours (for the one-hop small allreduce and alltoall).
     * Blocks until all are connected and checked, at most about the connect timeout. Connections for older
     * generations are refused from now on; those for newer ones wait for their own {@code connect}.
     *
     * @param generation the agreed generation; not older than any generation opened before
     * @param rank this worker's rank in it
     * @param peers every rank's data address, indexed by rank (this rank's included)
     * @throws WorkerLostException if a neighbour cannot be reached or does not connect in time
     * @throws KoloException if a neighbour refuses the connection (wrong job, generation or rank)
     */
    public PeerLinks connect(long generation, int rank, List<PeerAddress> peers) {
        return connect(generation, 0, rank, peers);
    }

    /**
     * Connects the links of one channel of a generation: {@code channel} 0 is the generation's own ring (as
     * {@link #connect(long, int, List)}), any other a process set's, whose connections are its own so that its
     * ops never meet another set's frames on a socket.
     *
     * @param rank this worker's rank in the channel
     * @param peers the channel's ranks' data addresses, indexed by their rank in it
     */
    public PeerLinks connect(long generation, int channel, int rank, List<PeerAddress> peers) {
        if (channel < 0 || channel > Handshake.MAX_CHANNEL) {
            throw new IllegalArgumentException("channel " + channel + " is outside 0.." + Handshake.MAX_CHANNEL);
        }
        List<PeerAddress> ps = List.copyOf(peers);
        int size = ps.size();
        if (size == 0 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " not in a ring of " + size);
        }
        pending.advanceTo(generation);
        Transport transport;
        try {
            transport = new Transport(generation, rank, size, options.chunkBytes(), options.progressTimeout().toNanos());
        } catch (IOException e) {
            throw new KoloException("cannot open a selector for the data plane: " + e.getMessage(), e);
        }
        Wire[] connected = new Wire[size];
        Wire[] accepted = new Wire[size];
        Link[] direct = new Link[size];
        Link left = null;
        Link right = null;
        List<Integer> shared = List.of();
        try {
            if (size > 1) {
                int r = (rank + 1) % size;
                int l = (rank - 1 + size) % size;
                Greeter g = new Greeter(job, generation, channel, rank, ps, pending, options, auth);
                connected[r] = g.connect(r, Handshake.KIND_RING);
                try {
                    accepted[l] = g.accept(l, Handshake.KIND_RING);
                } catch (WorkerLostException e) {
                    // The left neighbour may never connect because it was refused too (e.g. the two disagree on
                    // the secret): the right neighbour's refusal of our hello, if any, names the cause.
                    KoloException refusal = g.refusal(connected[r], r);
                    throw refusal != null ? refusal : e;
                }
                g.awaitAck(connected[r], r);
                openMesh(g, rank, l, r, connected, accepted);
                shared = new SharedMemoryUpgrade(job, generation, rank, ps.stream().map(PeerAddress::toString).toList(),
                        ps.stream().map(PeerAddress::host).toList(), options.sharedMemory(), options.sharedMemoryBytes(), options.peerCopy(),
                        options.sharedMemoryDir(), g.deadlineNanos()).run(connected, accepted, g::offered,
                        g::peerOffered, transport);
                left = new Link(accepted[l], l, ps.get(l).host());
                accepted[l] = null;
                transport.add(left);
                right = new Link(connected[r], r, ps.get(r).host());
                connected[r] = null;
                transport.add(right);
                for (int j = 0; j < size; j++) {
                    Wire w = j > rank ? connected[j] : accepted[j];
                    if (w != null) {
                        connected[j] = null;
                        accepted[j] = null;
                        direct[j] = new Link(w, j, ps.get(j).host());
                        transport.add(direct[j]);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            for (int j = 0; j < size; j++) {
                Io.closeQuietly(connected[j]);
                Io.closeQuietly(accepted[j]);
            }
            transport.abort(new WorkerLostException("generation " + generation + " could not connect", -1, null));
            transport.release(PeerLinks.RELEASE_TIMEOUT_NANOS);
            if (e instanceof RuntimeException re) {
                throw re;
            }
            throw new KoloException("cannot set up the data connections: " + e.getMessage(), e);
        }
        if (!shared.isEmpty()) {
            LOG.info("data plane: generation {}{} rank {} reaches rank{} {} through shared memory", generation,
                    channel == 0 ? "" : " process set " + channel, rank, shared.size() == 1 ? "" : "s", shared);
        }
        PeerLinks links = new PeerLinks(rings::remove, options().tls() != null, channel, ps, transport, left, right,
                direct, shared);
        rings.add(links);
        return links;
    }

    /**
     * Opens direct connections to the non-neighbours (none below 4 ranks): the lower rank connects, the higher one
     * accepts, so that no op ever waits for a connection.
     */
    private static void openMesh(Greeter g, int rank, int left, int right, Wire[] connected, Wire[] accepted) {
        int size = connected.length;
        for (int j = rank + 1; j < size; j++) {
            if (j != left && j != right) {
                connected[j] = g.connect(j, Handshake.KIND_DIRECT);
            }
        }
        for (int j = 0; j < rank; j++) {
            if (j != left && j != right) {
                accepted[j] = g.accept(j, Handshake.KIND_DIRECT);
            }
        }
        for (int j = rank + 1; j < size; j++) {
            if (j != left && j != right) {
                g.awaitAck(connected[j], j);
            }
        }
    }

    /** @return the handshake authentication of the job, or null without a secret */
    HandshakeAuth auth() {
        return auth;
    }

    PendingConnections pending() {
        return pending;
    }

    /** Closes every open ring, stops accepting and closes the listening socket. */
    @Override
    public void close() {
        acceptor.close();
        pending.close();
        for (PeerLinks r : new ArrayList<>(rings)) {
            r.close();
        }
        Io.closeQuietly(listener);
    }

    /** Convenience for tests and benchmarks: a listener bound to {@code host} on an ephemeral port. */
    public static ServerSocketChannel bindEphemeral(String host) throws IOException {
        ServerSocketChannel ch = ServerSocketChannel.open();
        ch.bind(new InetSocketAddress(host, 0), 64);
        return ch;
    }
}
