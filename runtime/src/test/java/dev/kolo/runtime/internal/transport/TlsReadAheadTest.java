package dev.kolo.runtime.internal.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.TestCerts;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A TLS record can carry a peer's next message together with the end of the one being read: once the
 * receiver has read the first, the second waits decrypted (or still encrypted) inside its {@link TlsWire}
 * and the socket is not readable. Every wait between and within ops must see it, or the peer's round is
 * answered only when more bytes happen to arrive or a deadline ends the wait.
 *
 * <p>The peer here writes two messages with one gathering write, so they leave in the same record(s) and
 * the receiver's first read takes both off the socket: deterministic, no timing involved. Each wait gets a
 * long timeout; returning well before it is what is checked.
 */
class TlsReadAheadTest {
    /** Longer than any wait that ends on bytes, short enough to keep a failing run brief. */
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A wait that saw the buffered message returns at once; anything near WAIT_NANOS saw nothing. */
    private static final long PROMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private ServerSocketChannel server;
    private TlsWire sender;
    private TlsWire receiver;
    private Transport transport;
    private Link link;

    @BeforeEach
    void connect() throws Exception {
        TestCerts certs = TestCerts.shared();
        SSLContext client = certs.worker0.context();
        SSLContext accepting = certs.worker1.context();
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        int port = server.socket().getLocalPort();
        SocketChannel out = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        SocketChannel in = server.accept();
        out.configureBlocking(false);
        in.configureBlocking(false);
        sender = TlsWire.client(out, client, "127.0.0.1", port);
        receiver = TlsWire.server(in, accepting);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        CompletableFuture<Void> clientSide = CompletableFuture.runAsync(() -> {
            try {
                Io.handshake(sender, deadline);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Io.handshake(receiver, deadline);
        clientSide.get(10, TimeUnit.SECONDS);
        link = new Link(receiver, 1, "127.0.0.1");
        transport = new Transport(1, 0, 2, 4096, WAIT_NANOS);
        transport.add(link);
    }

    @AfterEach
    void close() {
        if (transport != null) {
            transport.closeSelector();
        }
        if (sender != null) {
            Io.closeQuietly(sender);
        }
        if (receiver != null) {
            Io.closeQuietly(receiver);
        }
        Io.closeQuietly(server);
    }

    /**
     * @param firstBytes the first message's size: within one record (the second then waits decrypted), or
     *        spanning several (the second rides in the tail record)
     */
    @ParameterizedTest
    @ValueSource(ints = {40, 40_000})
    void everyWaitSeesAMessageAlreadyReadOffTheSocket(int firstBytes) throws Exception {
        byte[] first = pattern(firstBytes, 1);
        byte[] second = pattern(48, 2);
        sendTogether(first, second);

        ByteBuffer got = ByteBuffer.allocate(firstBytes);
        Io.readFully(receiver, got, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        assertArrayEquals(first, got.array());

        // The worker's collective thread, waiting without the ring (this is where rounds went unanswered).
        assertPrompt("idleWait", () -> transport.idleWait(WAIT_NANOS));
        // The thread that owns the ring, between ops.
        assertPrompt("awaitIncoming", () -> transport.awaitIncoming(new Link[] {link}, WAIT_NANOS));
        // An op waiting for this link's bytes.
        link.interest(SelectionKey.OP_READ);
        assertPrompt("park", () -> {
            transport.park(link, System.nanoTime(), 7);
            return true;
        });

        ByteBuffer rest = ByteBuffer.allocate(second.length);
        Io.readFully(receiver, rest, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        assertArrayEquals(second, rest.array());
        // Everything delivered: nothing may end a wait now (else an idle rank would spin).
        assertFalse(receiver.hasBuffered(), "nothing is left in the wire");
        assertFalse(transport.idleWait(TimeUnit.MILLISECONDS.toNanos(100)), "idleWait with nothing to read");
        assertFalse(transport.awaitIncoming(new Link[] {link}, 0), "awaitIncoming with nothing to read");
    }

    /** Both messages in one gathering write: the wire wraps them into the same record(s). */
    private void sendTogether(byte[] a, byte[] b) throws Exception {
        ByteBuffer[] both = {ByteBuffer.wrap(a), ByteBuffer.wrap(b)};
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (both[1].hasRemaining() || !sender.flushed()) {
            if (sender.write(both, 0, 2) == 0) {
                assertTrue(System.nanoTime() < deadline, "the loopback socket takes 40 KB");
                Thread.onSpinWait();
            }
        }
    }

    private interface Wait {
        boolean run() throws Exception;
    }

    private static void assertPrompt(String what, Wait wait) throws Exception {
        long t0 = System.nanoTime();
        boolean seen = wait.run();
        long took = System.nanoTime() - t0;
        assertTrue(seen && took < PROMPT_NANOS, what + " must return at once for a message the TLS wire holds, but "
                + "returned " + seen + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms");
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }
}
