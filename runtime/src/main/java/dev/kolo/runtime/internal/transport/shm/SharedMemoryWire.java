package dev.kolo.runtime.internal.transport.shm;

import dev.kolo.runtime.internal.transport.MappedWire;
import dev.kolo.runtime.internal.transport.OneBuffer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The byte stream between two ranks of one host, through a shared-memory segment: one {@link SharedRing} each way.
 * Frames, notices and every schedule run over it exactly as over a socket; only the bytes take another road.
 *
 * <p>The data connection the two ranks authenticated each other on stays open beside it and carries no data: it is
 * the doorbell and the watch. A side that parks raises its wait counter in the ring, looks once more and then waits
 * in its selector for this socket; a side that moves a cursor and sees the other side's counter raised writes one
 * byte to the socket. A peer that dies closes the socket (the kernel does it for a killed process), which wakes a
 * parked waiter just as on TCP, so the flags are never the only thing a wait watches; a stopped peer is caught by
 * the same progress deadline and membership as on TCP.
 *
 * <p>Threads: the thread that runs ops (holding the ring) reads, writes and drains the doorbell; another thread of
 * the process may only ask {@link #hasBuffered()} and raise or lower the reader's wait counter ({@link
 * #waitForBytes}), for the idle wait.
 */
public final class SharedMemoryWire extends MappedWire {
    private static final int DOORBELL_DRAIN_BYTES = 64;

    private final SocketChannel socket;
    private final SharedRing in;
    private final SharedRing out;
    private final ByteBuffer doorbell = ByteBuffer.allocateDirect(1);
    /** The socket reached its end (or failed): the peer closed it or is gone. */
    private volatile boolean peerClosed;

    /**
     * @param socket the authenticated data connection to the same peer: doorbell and watch, no data
     * @param in the ring the peer writes
     * @param out the ring this rank writes
     */
    public SharedMemoryWire(SocketChannel socket, SharedRing in, SharedRing out) {
        this.socket = socket;
        this.in = in;
        this.out = out;
    }

    @Override
    public SocketChannel socket() {
        return socket;
    }

    @Override
    public boolean flushed() {
        return true;
    }

    /**
     * Bytes the op's reader waits for before it can go on: 1 while it streams, a frame's whole payload while it waits
     * to use one in place. A wait for bytes ends only once that many are there.
     */
    private int needed = 1;

    /** Bytes in the ring, or the peer's end: either way a read would not return 0. Any thread. */
    @Override
    public boolean hasBuffered() {
        return peerClosed || in.hasBytes();
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long n = in.read(dsts, offset, length);
        if (n > 0) {
            if (in.writersWaiting()) {
                ring();
            }
            return n;
        }
        return peerClosed && !in.hasBytes() ? -1 : 0;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return one.read(this, dst);
    }

    /** For the single-buffer read and write, on the op's thread: no array per call. */
    private final OneBuffer one = new OneBuffer();

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (peerClosed) {
            throw new IOException("the peer closed its end of the shared-memory link");
        }
        long n = out.write(srcs, offset, length);
        if (n > 0 && out.readersWaiting()) {
            ring();
        }
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return one.write(this, src);
    }

    /**
     * Wakes the peer's parked thread. A full socket buffer means wake-ups are pending already; a failed socket means
     * the peer is gone, which its own end tells it.
     */
    private void ring() {
        doorbell.clear();
        try {
            socket.write(doorbell);
        } catch (IOException e) {
            peerClosed = true;
        }
    }

    /**
     * Before a thread parks for this wire's bytes (+1) or after (-1). @return whether bytes (or the peer's end) are
     * there already after raising the counter, so that the park must not happen; any thread
     */
    @Override
    protected boolean waitForBytes(int delta) {
        in.readersWaiting(delta);
        return delta > 0 && (peerClosed || in.hasBytes() && (needed <= 1 || Thread.currentThread() != owner
                || in.available(needed) >= needed));
    }

    // ------------------------------------------------------------------ reading in place (the op's thread)

    /** The thread that reads in place, whose waits count {@link #needed}; the idle thread's do not. */
    private Thread owner;

    /** The next frame this rank writes starts here: the ring aligns it. */
    @Override
    protected void writingFrame() {
        out.frameStart();
    }

    /** The next frame this rank reads starts here: the ring aligns it, as the writer did. */
    @Override
    protected void readingFrame() {
        in.frameStart();
    }

    /** @return the ring's size: the largest payload that can be used in place */
    @Override
    protected int capacity() {
        return in.capacity();
    }

    /**
     * @return whether {@code bytes} of payload are in the ring now, to be used where they lie; if not, the op's waits
     *         last until they are
     */
    @Override
    protected boolean payloadReady(int bytes) {
        if (in.available(bytes) >= bytes) {
            needed = 1;
            return true;
        }
        needed = bytes;
        owner = Thread.currentThread();
        return false;
    }

    /** @return whether the peer is gone with fewer than {@code bytes} left in the ring: they will never all be there */
    @Override
    protected boolean endedBefore(int bytes) {
        return peerClosed && in.available(bytes) < bytes;
    }

    /** Waits count single bytes again (an op that waited for a payload failed). */
    @Override
    protected void streaming() {
        needed = 1;
    }

    /** @return the ring's data region, where a ready payload lies from {@link #payloadOffset()} (wrapping at its end) */
    @Override
    protected ByteBuffer payloadData() {
        return in.data();
    }

    @Override
    protected int payloadOffset() {
        return in.readOffset();
    }

    /** The payload used in place is done with: its room goes back to the writer. */
    @Override
    protected void consumePayload(int bytes) {
        needed = 1;
        in.consume(bytes);
        if (in.writersWaiting()) {
            ring();
        }
    }

    /**
     * Before the op's thread parks for room to write (+1) or after (-1). @return whether there is room (or the peer
     * is gone) after raising the counter, so that the park must not happen
     */
    @Override
    protected boolean waitForRoom(int delta) {
        out.writersWaiting(delta);
        return delta > 0 && (peerClosed || out.hasRoom());
    }

    /**
     * Consumes the wake-ups that arrived on the socket, by the op's thread after it parked. Notes the peer's end.
     *
     * @return whether any wake-up (or the end) was there
     */
    @Override
    protected boolean drainWakeups(ByteBuffer scratch) {
        boolean any = false;
        try {
            while (true) {
                scratch.clear().limit(Math.min(scratch.capacity(), DOORBELL_DRAIN_BYTES));
                int n = socket.read(scratch);
                if (n < 0) {
                    peerClosed = true;
                    return true;
                }
                if (n == 0) {
                    return any;
                }
                any = true;
            }
        } catch (IOException e) {
            peerClosed = true;
            return true;
        }
    }
}
