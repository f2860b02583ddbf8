package dev.kolo.runtime.internal.transport;

import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;
import java.nio.channels.SocketChannel;

/**
 * The byte stream of one data connection, chosen once when the connection is made: the socket itself
 * ({@link PlainWire}), TLS over it ({@link TlsWire}), or memory both ranks map ({@link MappedWire}, with the socket
 * as its doorbell). Reads and writes never block. As on a socket, a read
 * returns 0 when nothing can be read now; a TLS wire returns 0 only when it holds no bytes it could decrypt,
 * so after a 0 waiting for the socket to become readable is always right. A TLS write may leave encrypted
 * bytes waiting for the socket: a frame is sent only once {@link #flushed()}.
 */
public interface Wire extends ScatteringByteChannel, GatheringByteChannel {
    /** @return the socket underneath, for selectors, socket options and closing */
    SocketChannel socket();

    /** @return true when everything written so far has been handed to the socket */
    boolean flushed();

    /**
     * @return true when a read would deliver bytes already taken off the socket (a TLS record read ahead with
     *         the previous one) or that never travel on it (a mapped wire's): the socket is then not readable, so
     *         every wait must ask this first. False for part of a record only: that read delivers nothing until the
     *         socket brings the rest.
     */
    default boolean hasBuffered() {
        return false;
    }

    @Override
    default long read(java.nio.ByteBuffer[] dsts) throws java.io.IOException {
        return read(dsts, 0, dsts.length);
    }

    @Override
    default long write(java.nio.ByteBuffer[] srcs) throws java.io.IOException {
        return write(srcs, 0, srcs.length);
    }

    @Override
    default boolean isOpen() {
        return socket().isOpen();
    }

    /** Closes the socket (a TLS wire sends no close_notify: a ring is torn down, not shut down politely). */
    @Override
    default void close() throws java.io.IOException {
        socket().close();
    }

}
