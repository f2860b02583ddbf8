package dev.kolo.runtime.internal.transport;

import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/** One established data connection to a peer rank, with its reusable frame reader and writer. */
public final class Link {
    final SocketChannel channel;
    /** What frames are read from and written to: the socket itself, or TLS over it. */
    public final Wire wire;
    /** The wire when its bytes move through mapped memory, its socket only the doorbell; else null. */
    final MappedWire mapped;
    public final int peerRank;
    public final String peerHost;
    public final FrameWriter out = new FrameWriter();
    public final FrameReader in = new FrameReader();
    private SelectionKey key;
    private int interest;

    public Link(Wire wire, int peerRank, String peerHost) {
        this.wire = wire;
        this.channel = wire.socket();
        this.mapped = wire instanceof MappedWire m ? m : null;
        if (wire instanceof TlsWire tls) {
            tls.growForBulk(); // allocated here, on the setup path: the ops reuse these buffers
        }
        this.peerRank = peerRank;
        this.peerHost = peerHost;
    }

    void registered(SelectionKey key) {
        this.key = key;
    }

    /** Changes the selector interest only when it differs: each change costs an epoll_ctl. */
    public void interest(int ops) {
        if (ops != interest) {
            key.interestOps(ops);
            interest = ops;
        }
    }

    /** @return whether the op in progress waits for this link's bytes (its read interest is set) */
    boolean wantsRead() {
        return (interest & SelectionKey.OP_READ) != 0;
    }

    public void close() {
        Io.closeQuietly(channel);
    }
}
