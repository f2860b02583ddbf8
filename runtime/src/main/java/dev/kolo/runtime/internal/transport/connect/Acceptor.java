package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.PlainWire;
import dev.kolo.runtime.internal.transport.TlsWire;
import dev.kolo.runtime.internal.transport.Wire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import javax.crypto.Mac;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread per worker that accepts data connections on the listening socket, reads each hello without
 * ever blocking on a slow or silent client (one selector for all of them, each with a deadline), checks
 * job and protocol, and parks good ones in {@link PendingConnections}. With a job secret it also runs the
 * challenge-response of {@link HandshakeAuth} first, so only peers that proved the key are ever parked.
 * With TLS it first completes each connection's TLS handshake on the same selector (the peer's certificate
 * must chain to the job's CA); the greeting's one deadline covers it. Rejections are answered with a reason
 * (in plaintext to a peer that spoke plaintext), logged (with the remote address) and closed.
 */
public final class Acceptor implements Runnable, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);

    private final ServerSocketChannel server;
    private final Selector selector;
    private final String job;
    private final PendingConnections pending;
    private final long helloTimeoutNanos;
    private final int socketBufferBytes;
    private final HandshakeAuth auth;
    private final SSLContext tls;
    private final Mac mac; // this thread's only
    private final Thread thread;
    private volatile boolean closed;
    private int greetings;
    /** Connections still sending their hello, at most: each holds a socket until its deadline. */
    static final int MAX_GREETINGS = 256;

    /** Per-connection greeting being read: hello (fixed part, job name, nonce), then the connector's proof. */
    private static final class Greeting {
        final long deadlineNanos;
        final Wire wire;
        final ByteBuffer fixed = ByteBuffer.allocate(Handshake.HELLO_FIXED_BYTES);
        ByteBuffer text;
        ByteBuffer nonce;
        Handshake.Hello hello;
        byte[] acceptorNonce;
        ByteBuffer proof;

        Greeting(long deadlineNanos, Wire wire) {
            this.deadlineNanos = deadlineNanos;
            this.wire = wire;
        }

        /** @return the buffer the next bytes belong in */
        ByteBuffer target() {
            if (proof != null) {
                return proof;
            }
            if (nonce != null) {
                return nonce;
            }
            return text != null ? text : fixed;
        }

        /** The hello exactly as received, for the proofs. */
        byte[][] helloBytes() {
            return new byte[][] {fixed.array(), java.util.Arrays.copyOf(text.array(), text.limit()), nonce.array()};
        }
    }

    /** A connection refused during its greeting; the message is logged and, where useful, sent back. */
    private static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean answer;

        Refusal(String message, boolean answer) {
            super(message, null, false, false);
            this.answer = answer;
        }
    }

    Acceptor(ServerSocketChannel server, String job, PendingConnections pending, long helloTimeoutNanos,
            int socketBufferBytes) throws IOException {
        this(server, job, pending, helloTimeoutNanos, socketBufferBytes, null, null);
    }

    /**
     * @param auth the job's handshake authentication, or null when the job has no secret
     * @param tls the TLS context of data connections, or null without TLS
     */
    Acceptor(ServerSocketChannel server, String job, PendingConnections pending, long helloTimeoutNanos,
            int socketBufferBytes, HandshakeAuth auth, SSLContext tls) throws IOException {
        this.server = server;
        this.tls = tls;
        this.job = job;
        this.pending = pending;
        this.helloTimeoutNanos = helloTimeoutNanos;
        this.socketBufferBytes = socketBufferBytes;
        this.auth = auth;
        this.mac = auth == null ? null : auth.mac();
        this.selector = Selector.open();
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        this.thread = new Thread(this, "kolo-data-acceptor-" + server.socket().getLocalPort());
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                selector.select(100);
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        acceptAll();
                    } else if (key.isReadable() || key.isWritable()) {
                        readHello(key);
                    }
                }
                expireSlowGreetings();
            }
        } catch (ClosedSelectorException e) {
            // closed: done
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.error("data plane: acceptor on port {} failed; no more data connections will be accepted",
                        server.socket().getLocalPort(), e);
            }
        } finally {
            for (SelectionKey k : selector.keys()) {
                if (k.attachment() instanceof Greeting) {
                    Io.closeQuietly(k.channel());
                }
            }
            Io.closeQuietly(selector);
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel ch;
        while ((ch = server.accept()) != null) {
            if (greetings >= MAX_GREETINGS) {
                LOG.warn("data plane: refusing a connection from {}: {} others have not finished their hello yet",
                        remote(ch), greetings);
                Io.closeQuietly(ch);
                continue;
            }
            try {
                ch.configureBlocking(false);
                Io.configure(ch, socketBufferBytes);
                Wire wire = tls == null ? new PlainWire(ch) : TlsWire.server(ch, tls);
                ch.register(selector, SelectionKey.OP_READ, new Greeting(System.nanoTime() + helloTimeoutNanos, wire));
                greetings++;
            } catch (IOException e) {
                LOG.warn("data plane: dropping a connection from {}: {}", remote(ch), e.toString());
                Io.closeQuietly(ch);
            }
        }
    }

    private void readHello(SelectionKey key) {
        SocketChannel ch = (SocketChannel) key.channel();
        Greeting g = (Greeting) key.attachment();
        Handshake.Hello hello;
        try {
            if (g.wire instanceof TlsWire t && !t.handshaken()) {
                if (!t.handshake()) {
                    key.interestOps(t.handshakeInterest());
                    return;
                }
                key.interestOps(SelectionKey.OP_READ);
                // Records may already hold the hello: read on at once rather than wait for the socket.
            }
            hello = advance(g.wire, g);
            if (hello == null) {
                return; // wait for more
            }
        } catch (SSLException e) {
            key.cancel();
            greetings--;
            refuseTls(ch, (TlsWire) g.wire, e);
            return;
        } catch (Refusal r) {
            key.cancel();
            greetings--;
            if (r.answer && g.hello != null) {
                reject(g.wire, g.hello, r.getMessage());
            } else if (r.answer) {
                refusePlainly(ch, r.getMessage());
            } else {
                LOG.warn("data plane: refusing a connection from {}: {}", remote(ch), r.getMessage());
                Io.closeQuietly(ch);
            }
            return;
        } catch (IOException | IllegalArgumentException e) {
            String what = g.hello == null ? "a connection" : g.hello.describe();
            LOG.warn("data plane: refusing {} from {}: {}", what, remote(ch), e.getMessage());
            key.cancel();
            greetings--;
            Io.closeQuietly(ch);
            return;
        }
        key.cancel(); // from here on the ring's own selector watches the channel
        greetings--;
        String refusal = pending.park(new PendingConnections.Parked(hello, g.wire));
        if (refusal != null) {
            reject(g.wire, hello, refusal);
        }
    }

    /**
     * Reads what has arrived and moves the greeting on. Every length is fixed or bounded before anything is
     * allocated, and the whole greeting shares one deadline ({@link #expireSlowGreetings}).
     *
     * @return the hello once the connection may be parked, or null while more bytes are needed
     */
    private Handshake.Hello advance(Wire ch, Greeting g) throws IOException, Refusal {
        while (true) {
            ByteBuffer target = g.target();
            int n = ch.read(target);
            if (n < 0) {
                throw new IOException("closed before completing its " + (g.proof != null ? "proof" : "hello"));
            }
            if (tls == null && g.text == null && g.fixed.position() >= 2 && g.fixed.get(0) == TLS_HANDSHAKE_RECORD
                    && g.fixed.get(1) == 3) {
                // Answered in plaintext: the peer's TLS sees a Kolo answer and can say it came without TLS.
                throw new Refusal("the peer speaks TLS but this worker has no TLS settings: set KOLO_TLS_CERT, "
                        + "KOLO_TLS_KEY and KOLO_TLS_CA on every worker of the job, or on none", true);
            }
            if (g.text == null && g.fixed.position() >= 4 && g.fixed.getInt(0) != Handshake.MAGIC) {
                throw new IllegalArgumentException(String.format("not a Kolo data-plane peer (magic 0x%08x)",
                        g.fixed.getInt(0))); // say so now rather than at the hello deadline
            }
            if (target.hasRemaining()) {
                return null;
            }
            if (target == g.fixed) {
                g.fixed.flip();
                g.text = ByteBuffer.allocate(Handshake.helloTextLength(g.fixed));
                Handshake.helloAuthenticated(g.fixed); // unknown flags: refuse now
            } else if (target == g.text && g.nonce == null && g.hello == null) {
                g.text.flip();
                g.hello = Handshake.decodeHello(g.fixed, g.text);
                if (!job.equals(g.hello.job())) {
                    throw new Refusal("job '" + g.hello.job() + "' does not match this worker's job '" + job + "'", true);
                }
                boolean peerAuthenticates = Handshake.helloAuthenticated(g.fixed);
                if (auth == null && peerAuthenticates) {
                    throw new Refusal("the peer authenticates with a KOLO_JOB_SECRET but this worker has none: set "
                            + "the same KOLO_JOB_SECRET on every worker of the job", true);
                }
                if (auth != null && !peerAuthenticates) {
                    throw new Refusal("the peer sent no proof of this job's KOLO_JOB_SECRET (it runs without one): "
                            + "set the same KOLO_JOB_SECRET on every worker of the job", true);
                }
                if (auth == null) {
                    return g.hello;
                }
                g.nonce = ByteBuffer.allocate(HandshakeAuth.NONCE_BYTES);
            } else if (target == g.nonce && g.proof == null) {
                challenge(ch, g);
                g.proof = ByteBuffer.allocate(HandshakeAuth.PROOF_BYTES);
            } else if (target == g.proof) {
                byte[] expected = HandshakeAuth.connectorProof(mac, g.acceptorNonce, g.helloBytes());
                if (!HandshakeAuth.same(expected, g.proof.array())) {
                    // No answer: a prober learns nothing from a reason, a real peer learns from the close.
                    throw new Refusal(g.hello.describe() + ": wrong proof of the job secret (the peer has another "
                            + "KOLO_JOB_SECRET, or is not a worker of this job)", false);
                }
                return g.hello;
            }
        }
    }

    /** Sends this side's nonce and proof; 86 bytes always fit the empty send buffer of a new connection. */
    private void challenge(Wire ch, Greeting g) throws IOException {
        g.acceptorNonce = auth.nonce();
        byte[] proof = HandshakeAuth.acceptorProof(mac, g.acceptorNonce, g.helloBytes());
        ByteBuffer out = Handshake.encodeChallenge(g.hello.generation(), g.hello.receiverRank(), g.acceptorNonce,
                proof);
        ch.write(out);
        if (out.hasRemaining() || !ch.flushed()) {
            throw new IOException("the peer does not read its challenge");
        }
    }

    /** Answers with the reason (best effort, it fits any socket buffer), logs it and closes. */
    static void reject(Wire ch, Handshake.Hello hello, String reason) {
        LOG.warn("data plane: refusing {} from {}: {}", hello.describe(), remote(ch.socket()), reason);
        try {
            ch.write(Handshake.encodeAck(Handshake.REJECTED, hello.generation(), -1, reason));
        } catch (IOException ignored) {
            // the peer learns from the close instead
        }
        Io.closeQuietly(ch);
    }

    /** First byte of a TLS record that carries a handshake message (a ClientHello opens every TLS connection). */
    static final byte TLS_HANDSHAKE_RECORD = 0x16;

    /** Answers a connection refused before its hello was read, in plaintext, then closes it. */
    private static void refusePlainly(SocketChannel ch, String reason) {
        LOG.warn("data plane: refusing a connection from {}: {}", remote(ch), reason);
        try {
            ch.write(Handshake.encodeAck(Handshake.REJECTED, 0, -1, reason));
        } catch (IOException ignored) {
            // the peer learns from the close instead
        }
        Io.closeQuietly(ch);
    }

    /** A failed TLS handshake: a plaintext Kolo peer gets its reason in plaintext, others the TLS alert already sent. */
    private static void refuseTls(SocketChannel ch, TlsWire wire, SSLException e) {
        if (wire.startedWith(Handshake.MAGIC)) {
            refusePlainly(ch, "this worker requires TLS on the data plane but the peer sent plaintext: set "
                    + "KOLO_TLS_CERT, KOLO_TLS_KEY and KOLO_TLS_CA on every worker of the job, or on none");
            return;
        }
        LOG.warn("data plane: refusing a connection from {}: TLS failed ({}); the peer must be a worker of this job "
                + "speaking TLS 1.3 with a certificate that chains to this worker's KOLO_TLS_CA (and trust the same CA)",
                remote(ch), e.getMessage());
        Io.closeQuietly(ch);
    }

    private void expireSlowGreetings() {
        long now = System.nanoTime();
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Greeting g && now - g.deadlineNanos > 0) {
                LOG.warn("data plane: no complete {} from {} in time; closing",
                        g.wire instanceof TlsWire t && !t.handshaken() ? "TLS handshake" : "hello",
                        remote((SocketChannel) k.channel()));
                k.cancel();
                greetings--;
                Io.closeQuietly(k.channel());
            }
        }
    }

    private static String remote(SocketChannel ch) {
        try {
            return String.valueOf(ch.getRemoteAddress());
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
