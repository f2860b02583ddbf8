package dev.kolo.runtime.ring;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Opens the data connections of one generation: connect (retrying until the deadline, the peer may not be
 * listening yet) and send a hello; claim a peer's parked connection, check it is meant for this rank and
 * ring, and ack it; wait for the peer's ack. To avoid a wait cycle around the ring, every rank first sends
 * its hellos, then acks what it claims, and only then waits for acks.
 */
final class Greeter {
    private final String job;
    private final long generation;
    private final int rank;
    private final int size;
    private final List<PeerAddress> peers;
    private final PendingConnections pending;
    private final int socketBufferBytes;
    private final long deadlineNanos;
    private final long timeoutMillis;

    Greeter(String job, long generation, int rank, List<PeerAddress> peers, PendingConnections pending,
            DataPlaneOptions options) {
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

    /** Connects to {@code peer} and sends the hello; the ack is read later by {@link #awaitAck}. */
    SocketChannel connect(int peer, byte kind) {
        PeerAddress a = peers.get(peer);
        long backoffMillis = 5;
        while (true) {
            SocketChannel ch = null;
            try {
                ch = Io.connect(new InetSocketAddress(a.host(), a.port()), deadlineNanos, socketBufferBytes);
                Io.writeFully(ch, Handshake.encodeHello(
                        new Handshake.Hello(kind, generation, rank, peer, size, job)), deadlineNanos);
                return ch;
            } catch (ConnectException e) {
                Io.closeQuietly(ch); // not listening yet: retry until the deadline
            } catch (IOException e) {
                Io.closeQuietly(ch);
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

    /** Claims the connection {@code peer} opened to this rank, checks it and acks it. */
    SocketChannel accept(int peer, byte kind) {
        while (true) {
            PendingConnections.Parked p;
            try {
                p = pending.claim(generation, kind, peer, deadlineNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkerLostException("interrupted while waiting for rank " + peer + " to connect", peer,
                        peers.get(peer).host());
            }
            if (p == null) {
                throw new WorkerLostException("rank " + peer + " (" + peers.get(peer) + ") did not open its data "
                        + "connection to rank " + rank + " within " + timeoutMillis + " ms while forming generation "
                        + generation, peer, peers.get(peer).host());
            }
            Handshake.Hello h = p.hello();
            if (h.receiverRank() != rank || h.size() != size) {
                Acceptor.reject(p.channel(), h, "this worker is rank " + rank + " of " + size + " in generation "
                        + generation);
                continue; // the right connection may still come
            }
            try {
                Io.writeFully(p.channel(), Handshake.encodeAck(Handshake.ACCEPTED, generation, rank, ""), deadlineNanos);
                return p.channel();
            } catch (IOException e) {
                Io.closeQuietly(p.channel());
                throw unreachable(peer, e);
            }
        }
    }

    /** Reads the peer's answer to our hello. */
    void awaitAck(SocketChannel ch, int peer) {
        try {
            ByteBuffer fixed = ByteBuffer.allocate(Handshake.ACK_FIXED_BYTES);
            Io.readFully(ch, fixed, deadlineNanos);
            fixed.flip();
            ByteBuffer text = ByteBuffer.allocate(Handshake.ackTextLength(fixed));
            Io.readFully(ch, text, deadlineNanos);
            text.flip();
            Handshake.Ack ack = Handshake.decodeAck(fixed, text);
            if (ack.status() != Handshake.ACCEPTED) {
                throw new KoloException("rank " + peer + " (" + peers.get(peer) + ") refused the data connection of "
                        + "job '" + job + "' generation " + generation + " from rank " + rank + ": " + ack.reason());
            }
            if (ack.generation() != generation || ack.rank() != peer) {
                throw new KoloException("rank " + peer + " (" + peers.get(peer) + ") acked generation "
                        + ack.generation() + " as rank " + ack.rank() + "; expected generation " + generation);
            }
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
