package dev.kolo.runtime.internal.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** A data connection without TLS: every call goes straight to the socket (the JIT inlines the hop). */
public final class PlainWire implements Wire {
    private final SocketChannel ch;

    public PlainWire(SocketChannel ch) {
        this.ch = ch;
    }

    @Override
    public SocketChannel socket() {
        return ch;
    }

    @Override
    public boolean flushed() {
        return true;
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        return ch.read(dsts, offset, length);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return ch.read(dst);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return ch.write(srcs, offset, length);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return ch.write(src);
    }
}
