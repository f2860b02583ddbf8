package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.PlainWire;
import dev.kolo.runtime.internal.transport.TlsWire;
import dev.kolo.runtime.internal.transport.Wire;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/**
 * Opens the data connections of one generation: connect (retrying until the deadline, the peer may not be
 * listening yet) and send a hello; claim a peer's parked connection, check it is meant for this rank and
 * ring, and ack it; wait for the peer's ack. To avoid a wait cycle around the ring, every rank first sends
 * its hellos, then acks what it claims, and only then waits for acks. With a job secret, connecting also
 * answers the peer's challenge (its acceptor thread runs independently of its rings, so this never waits
 * for the peer's progress): the peer proves the key first, then this rank. With TLS every connection first
 * completes its TLS handshake (by the same deadline), and all of the above runs inside it.
 */
public final class Greeter {
    private final String job;
    private final long generation;
    private final int channel;
    private final int rank;
    private final int size;
    private final List<PeerAddress> peers;
    private final PendingConnections pending;
    private final int socketBufferBytes;
    private final long deadlineNanos;
    private final long timeoutMillis;
    private final HandshakeAuth auth;
    private final SSLContext tls;
    /** Whether this rank's hellos to co-located peers offer shared memory. */
    private final boolean offersSharedMemory;
    /** By peer: whether the connection it opened to this rank (the one accepted) offers shared memory. */
    private final boolean[] peerOffersSharedMemory;

    /** @param auth the job's handshake authentication, or null when the job has no secret */
    Greeter(String job, long generation, int channel, int rank, List<PeerAddress> peers, PendingConnections pending,
            TransportOptions options, HandshakeAuth auth) {
        this.channel = channel;
        this.auth = auth;
        this.tls = options.tls();
        this.offersSharedMemory = options.sharedMemory();
        this.peerOffersSharedMemory = new boolean[peers.size()];
        this.job = job;
        this.generation = generation;
        this.rank = rank;
        this.size = peers.size();
        this.peers = peers;
        this.pending = pending;
        this.socketBufferBytes = options.socketBufferBytes();
        this.timeoutMillis = options.connectTimeout().toMillis();
        this.deadlineNanos = System.nanoTime() + options.connectTimeout().toNanos();
    }

    /** @return whether this rank's connection to {@code peer} offered shared memory in its hello */
    boolean offered(int peer) {
        return offersSharedMemory && PeerAddress.colocated(peers, rank, peer);
    }

    /** @return whether the connection {@code peer} opened to this rank (claimed by {@link #accept}) offers it */
    boolean peerOffered(int peer) {
        return peerOffersSharedMemory[peer];
    }

    /** @return when forming this generation's connections must be done ({@link System#nanoTime()}) */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * Connects to {@code peer}, sends the hello and, with a secret, completes the challenge-response; the
     * ack is read later by {@link #awaitAck}.
     */
    Wire connect(int peer, byte kind) {
        PeerAddress a = peers.get(peer);
        long backoffMillis = 5;
        while (true) {
            SocketChannel ch = null;
            Wire wire = null;
            try {
                ch = Io.connect(new InetSocketAddress(a.host(), a.port()), deadlineNanos, socketBufferBytes);
                if (tls != null) {
                    TlsWire t = TlsWire.client(ch, tls, a.host(), a.port());
                    wire = t;
                    handshake(t, peer);
                } else {
                    wire = new PlainWire(ch);
                }
                byte[] nonce = auth == null ? null : auth.nonce();
                boolean sharedMemory = offersSharedMemory && PeerAddress.colocated(peers, rank, peer);
                ByteBuffer hello = Handshake.encodeHello(
                        new Handshake.Hello(kind, generation, channel, rank, peer, size, job, sharedMemory), nonce);
                byte[] helloBytes = java.util.Arrays.copyOf(hello.array(), hello.limit());
                Io.writeFully(wire, hello, deadlineNanos);
                if (auth != null) {
                    answerChallenge(wire, peer, helloBytes);
                }
                return wire;
            } catch (KoloException e) {
                Io.closeQuietly(ch);
                throw e;
            } catch (ConnectException e) {
                Io.closeQuietly(ch); // not listening yet: retry until the deadline
            } catch (SSLException e) {
                Io.closeQuietly(ch);
                throw tlsFailure(peer, wire, e);
            } catch (IOException | IllegalArgumentException e) {
                Io.closeQuietly(ch); // includes a challenge that is not a Kolo answer
                throw unreachable(peer, e);
            }
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                throw unreachable(peer, new ConnectException("connection refused until the deadline"));
            }
            sleep(Math.min(backoffMillis, left));
            backoffMillis = Math.min(200, backoffMillis * 2);
        }
    }

    /**
     * Runs the TLS handshake by the deadline. The peer's certificate is checked here; in TLS 1.3 the peer
     * checks ours after this side is done, so its refusal arrives with the first read after the hello.
     */
    private void handshake(TlsWire t, int peer) throws IOException {
        try {
            Io.handshake(t, deadlineNanos);
        } catch (java.io.EOFException e) {
            // Closed in the middle: a worker without TLS refuses the ClientHello, or one that refused our certificate.
            throw new SSLException(e.getMessage() + "; it may run without TLS (no KOLO_TLS_* settings)", e);
        }
    }

    /** @return a refusal that names the peer and the settings to fix */
    private KoloException tlsFailure(int peer, Wire wire, SSLException e) {
        String plaintext = wire instanceof TlsWire t && t.startedWith(Handshake.MAGIC)
                ? " (it answered in plaintext: it runs without TLS)" : "";
        return new KoloException("TLS with rank " + peer + " (" + peers.get(peer) + ") failed on the data connection of job '"
                + job + "' generation " + generation + " from rank " + rank + ": " + e.getMessage() + plaintext
                + "; every worker needs KOLO_TLS_CERT and KOLO_TLS_KEY of a certificate signed by a CA in the others' "
                + "KOLO_TLS_CA (one job CA for all), or none of them has TLS settings", e);
    }

    /** Claims the connection {@code peer} opened to this rank, checks it and acks it. */
    Wire accept(int peer, byte kind) {
        while (true) {
            PendingConnections.Parked p;
            try {
                p = pending.claim(generation, channel, kind, peer, deadlineNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkerLostException("interrupted while waiting for rank " + peer + " to connect", peer,
                        peers.get(peer).host());
            }
            if (p == null) {
                throw new WorkerLostException("rank " + peer + " (" + peers.get(peer) + ") did not open its data "
                        + "connection to rank " + rank + " within " + timeoutMillis + " ms while forming generation "
                        + generation + (tls == null ? "" : " (with TLS: this worker's log names connections whose TLS "
                        + "handshake it refused)"), peer, peers.get(peer).host());
            }
            Handshake.Hello h = p.hello();
            if (h.receiverRank() != rank || h.size() != size) {
                Acceptor.reject(p.channel(), h, "this worker is rank " + rank + " of " + size + " in generation "
                        + generation);
                continue; // the right connection may still come
            }
            try {
                Io.writeFully(p.channel(), Handshake.encodeAck(Handshake.ACCEPTED, generation, rank, ""), deadlineNanos);
                peerOffersSharedMemory[peer] = h.sharedMemory();
                return p.channel();
            } catch (IOException e) {
                Io.closeQuietly(p.channel());
                throw unreachable(peer, e);
            }
        }
    }

    /** Reads one acknowledgement (fixed part, then its capped text) by the System.nanoTime() deadline. */
    static Handshake.Ack readAck(Wire ch, long deadline) throws IOException {
        ByteBuffer fixed = ByteBuffer.allocate(Handshake.ACK_FIXED_BYTES);
        Io.readFully(ch, fixed, deadline);
        fixed.flip();
        ByteBuffer text = ByteBuffer.allocate(Handshake.ackTextLength(fixed));
        Io.readFully(ch, text, deadline);
        text.flip();
        return Handshake.decodeAck(fixed, text);
    }

    private KoloException refused(int peer, Handshake.Ack ack) {
        return new KoloException("rank " + peer + " (" + peers.get(peer) + ") refused the data connection of job '"
                + job + "' generation " + generation + " from rank " + rank + ": " + ack.reason());
    }

    /**
     * Reads the peer's challenge, checks its proof and sends this rank's. Every read is bounded by the
     * deadline and by fixed or capped lengths.
     */
    private void answerChallenge(Wire ch, int peer, byte[] helloBytes) throws IOException {
        Handshake.Ack ack = readAck(ch, deadlineNanos);
        if (ack.status() == Handshake.REJECTED) {
            throw refused(peer, ack);
        }
        if (ack.status() != Handshake.CHALLENGE) {
            throw new KoloException("rank " + peer + " (" + peers.get(peer) + ") did not challenge the data connection "
                    + "of job '" + job + "' (status " + ack.status() + "); it runs without KOLO_JOB_SECRET or another "
                    + "Kolo version: set the same KOLO_JOB_SECRET on every worker");
        }
        ByteBuffer extra = ByteBuffer.allocate(Handshake.CHALLENGE_EXTRA_BYTES);
        Io.readFully(ch, extra, deadlineNanos);
        byte[] peerNonce = java.util.Arrays.copyOfRange(extra.array(), 0, HandshakeAuth.NONCE_BYTES);
        byte[] peerProof = java.util.Arrays.copyOfRange(extra.array(), HandshakeAuth.NONCE_BYTES,
                Handshake.CHALLENGE_EXTRA_BYTES);
        javax.crypto.Mac mac = auth.mac();
        if (!HandshakeAuth.same(HandshakeAuth.acceptorProof(mac, peerNonce, helloBytes), peerProof)) {
            throw new KoloException("rank " + peer + " (" + peers.get(peer) + ") failed to prove it holds the secret of "
                    + "job '" + job + "' (data connection from rank " + rank + ", generation " + generation
                    + "): it has another KOLO_JOB_SECRET or is not a worker of this job; set the same "
                    + "KOLO_JOB_SECRET on every worker");
        }
        Io.writeFully(ch, ByteBuffer.wrap(HandshakeAuth.connectorProof(mac, peerNonce, helloBytes)), deadlineNanos);
    }

    /**
     * @return the peer's refusal of the hello sent on {@code ch}, if it has arrived within a moment, else null;
     *         for a better error when the ring cannot form
     */
    KoloException refusal(Wire ch, int peer) {
        try {
            Handshake.Ack ack = readAck(ch, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200));
            if (ack.status() == Handshake.REJECTED) {
                return refused(peer, ack);
            }
        } catch (SSLException e) {
            return tlsFailure(peer, ch, e);
        } catch (IOException | IllegalArgumentException e) {
            // nothing (readable) arrived: no refusal to report
        }
        return null;
    }

    /** Reads the peer's answer to our hello. */
    void awaitAck(Wire ch, int peer) {
        try {
            Handshake.Ack ack = readAck(ch, deadlineNanos);
            if (ack.status() != Handshake.ACCEPTED) {
                throw refused(peer, ack);
            }
            if (ack.generation() != generation || ack.rank() != peer) {
                throw new KoloException("rank " + peer + " (" + peers.get(peer) + ") acked generation "
                        + ack.generation() + " as rank " + ack.rank() + "; expected generation " + generation);
            }
        } catch (SSLException e) {
            Io.closeQuietly(ch);
            throw tlsFailure(peer, ch, e);
        } catch (IOException | IllegalArgumentException e) {
            throw unreachable(peer, e);
        }
    }

    private WorkerLostException unreachable(int peer, Exception e) {
        WorkerLostException x = new WorkerLostException("cannot open the data connection from rank " + rank
                + " to rank " + peer + " (" + peers.get(peer) + ") for generation " + generation + ": " + e.getMessage(),
                peer, peers.get(peer).host());
        x.initCause(e);
        return x;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted while connecting the data plane");
        }
    }
}
