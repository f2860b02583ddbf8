package dev.kolo.runtime.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread per worker that accepts data connections on the listening socket, reads each hello without
 * ever blocking on a slow or silent client (one selector for all of them, each with a deadline), checks
 * job and protocol, and parks good ones in {@link PendingConnections}. Rejections are answered with a
 * reason, logged and closed.
 */
final class Acceptor implements Runnable, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);

    private final ServerSocketChannel server;
    private final Selector selector;
    private final String job;
    private final PendingConnections pending;
    private final long helloTimeoutNanos;
    private final int socketBufferBytes;
    private final Thread thread;
    private volatile boolean closed;
    private int greetings;
    /** Connections still sending their hello, at most: each holds a socket until its deadline. */
    static final int MAX_GREETINGS = 256;

    /** Per-connection hello being read. */
    private static final class Greeting {
        final long deadlineNanos;
        final ByteBuffer fixed = ByteBuffer.allocate(Handshake.HELLO_FIXED_BYTES);
        ByteBuffer text;

        Greeting(long deadlineNanos) {
            this.deadlineNanos = deadlineNanos;
        }
    }

    Acceptor(ServerSocketChannel server, String job, PendingConnections pending, long helloTimeoutNanos,
            int socketBufferBytes) throws IOException {
        this.server = server;
        this.job = job;
        this.pending = pending;
        this.helloTimeoutNanos = helloTimeoutNanos;
        this.socketBufferBytes = socketBufferBytes;
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
                    } else if (key.isReadable()) {
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
                ch.register(selector, SelectionKey.OP_READ, new Greeting(System.nanoTime() + helloTimeoutNanos));
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
            ByteBuffer target = g.text == null ? g.fixed : g.text;
            if (ch.read(target) < 0) {
                throw new IOException("closed before completing its hello");
            }
            if (g.text == null && g.fixed.position() >= 4 && g.fixed.getInt(0) != Handshake.MAGIC) {
                throw new IllegalArgumentException(String.format("not a Kolo data-plane peer (magic 0x%08x)",
                        g.fixed.getInt(0))); // say so now rather than at the hello deadline
            }
            if (g.text == null && !g.fixed.hasRemaining()) {
                g.fixed.flip();
                g.text = ByteBuffer.allocate(Handshake.helloTextLength(g.fixed));
                ch.read(g.text);
            }
            if (g.text == null || g.text.hasRemaining()) {
                return; // wait for more
            }
            g.text.flip();
            hello = Handshake.decodeHello(g.fixed, g.text);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("data plane: refusing a connection from {}: {}", remote(ch), e.getMessage());
            key.cancel();
            greetings--;
            Io.closeQuietly(ch);
            return;
        }
        key.cancel(); // from here on the ring's own selector watches the channel
        greetings--;
        String refusal = job.equals(hello.job())
                ? pending.park(new PendingConnections.Parked(hello, ch))
                : "job '" + hello.job() + "' does not match this worker's job '" + job + "'";
        if (refusal != null) {
            reject(ch, hello, refusal);
        }
    }

    /** Answers with the reason (best effort, it fits any socket buffer), logs it and closes. */
    static void reject(SocketChannel ch, Handshake.Hello hello, String reason) {
        LOG.warn("data plane: refusing {} from {}: {}", hello.describe(), remote(ch), reason);
        try {
            ch.write(Handshake.encodeAck(Handshake.REJECTED, hello.generation(), -1, reason));
        } catch (IOException ignored) {
            // the peer learns from the close instead
        }
        Io.closeQuietly(ch);
    }

    private void expireSlowGreetings() {
        long now = System.nanoTime();
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Greeting g && now - g.deadlineNanos > 0) {
                LOG.warn("data plane: no complete hello from {} in time; closing", remote((SocketChannel) k.channel()));
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
