package dev.kolo.runtime.internal.transport;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/** Deadline-bounded I/O on non-blocking channels for the setup path (handshakes); allocates freely. */
public final class Io {
    private Io() {
    }

    public static void readFully(SocketChannel ch, ByteBuffer b, long deadlineNanos) throws IOException {
        readFully(new PlainWire(ch), b, deadlineNanos);
    }

    public static void writeFully(SocketChannel ch, ByteBuffer b, long deadlineNanos) throws IOException {
        writeFully(new PlainWire(ch), b, deadlineNanos);
    }

    public static void readFully(Wire w, ByteBuffer b, long deadlineNanos) throws IOException {
        try (Selector sel = Selector.open()) {
            w.socket().register(sel, SelectionKey.OP_READ);
            while (b.hasRemaining()) {
                long n = w.read(b);
                if (n < 0) {
                    throw new EOFException("connection closed by the peer during the handshake");
                }
                if (n == 0) {
                    sel.select(remainingMillis(deadlineNanos, "handshake read"));
                    sel.selectedKeys().clear();
                }
            }
        }
    }

    /** Writes all of {@code b} and, for TLS, until the encrypted bytes have reached the socket. */
    public static void writeFully(Wire w, ByteBuffer b, long deadlineNanos) throws IOException {
        while (b.hasRemaining() || !w.flushed()) {
            if (w.write(b) == 0) {
                try (Selector sel = Selector.open()) {
                    w.socket().register(sel, SelectionKey.OP_WRITE);
                    sel.select(remainingMillis(deadlineNanos, "handshake write"));
                }
            }
        }
    }

    /** Completes a TLS handshake by the deadline (a peer that stalls it is a timeout, never a hang). */
    public static void handshake(TlsWire w, long deadlineNanos) throws IOException {
        try (Selector sel = Selector.open()) {
            SelectionKey key = w.socket().register(sel, 0);
            while (!w.handshake()) {
                key.interestOps(w.handshakeInterest());
                sel.select(remainingMillis(deadlineNanos, "TLS handshake"));
                sel.selectedKeys().clear();
            }
        }
    }

    /** Opens a non-blocking channel connected to {@code address}, or throws (refused, unreachable, deadline). */
    public static SocketChannel connect(InetSocketAddress address, long deadlineNanos, int socketBufferBytes)
            throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.configureBlocking(false);
            configure(ch, socketBufferBytes);
            if (!ch.connect(address)) {
                try (Selector sel = Selector.open()) {
                    ch.register(sel, SelectionKey.OP_CONNECT);
                    while (!ch.finishConnect()) {
                        sel.select(remainingMillis(deadlineNanos, "connect to " + address));
                        sel.selectedKeys().clear();
                    }
                }
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    /** Low latency and (optionally) fixed buffers; set before connect so the window scale can use them. */
    public static void configure(SocketChannel ch, int socketBufferBytes) throws IOException {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        if (socketBufferBytes > 0) {
            ch.setOption(StandardSocketOptions.SO_SNDBUF, socketBufferBytes);
            ch.setOption(StandardSocketOptions.SO_RCVBUF, socketBufferBytes);
        }
    }

    static long remainingMillis(long deadlineNanos, String what) throws SocketTimeoutException {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException(what + " timed out");
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(left));
    }

    public static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // already failing or closing: nothing more to do with it
            }
        }
    }
}
