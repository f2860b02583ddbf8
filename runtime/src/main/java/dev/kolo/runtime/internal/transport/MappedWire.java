package dev.kolo.runtime.internal.transport;

import java.nio.ByteBuffer;

/**
 * The seam to a wire whose bytes do not travel on its socket but through memory both ranks map (shared memory
 * between ranks of one host, {@code transport.shm}): what the frames and the pump ask of it beyond a byte stream.
 * The socket stays the pair's doorbell and watch: its readiness only says that the peer woke this side or closed,
 * so a wait first announces itself ({@link #waitForBytes}, {@link #waitForRoom}), parks on the socket, then consumes
 * the wake-ups ({@link #drainWakeups}). Frames start aligned ({@link #writingFrame}, {@link #readingFrame}), and a
 * received payload can be used where it lies ({@link #payloadReady} and after).
 *
 * <p>An abstract class, not an interface: the frames ask {@code instanceof} at every frame, which on a class is one
 * compare of the class's display, where an interface check goes through the secondary supers (a cache several
 * threads of one process may contend for).
 */
public abstract class MappedWire implements Wire {
    /** The next frame this rank writes starts here: the memory aligns it. */
    protected abstract void writingFrame();

    /** The next frame this rank reads starts here: the memory aligns it, as the writer did. */
    protected abstract void readingFrame();

    /** @return the largest payload that can be used in place */
    protected abstract int capacity();

    /**
     * @return whether {@code bytes} of payload are there now, to be used where they lie; if not, the op's waits last
     *         until they are
     */
    protected abstract boolean payloadReady(int bytes);

    /** @return whether the peer is gone with fewer than {@code bytes} left: they will never all be there */
    protected abstract boolean endedBefore(int bytes);

    /** @return the memory where a ready payload lies from {@link #payloadOffset()} (wrapping at its end) */
    protected abstract ByteBuffer payloadData();

    protected abstract int payloadOffset();

    /** The payload used in place is done with: its room goes back to the writer. */
    protected abstract void consumePayload(int bytes);

    /** Waits count single bytes again (an op that waited for a payload failed). */
    protected abstract void streaming();

    /**
     * A thread about to wait for bytes (+1), or done waiting (-1); any thread of the process. @return true when bytes
     * (or the peer's end) are already there after announcing, so the wait must not happen
     */
    protected abstract boolean waitForBytes(int delta);

    /** Like {@link #waitForBytes}, for room to write; the op's thread only. */
    protected abstract boolean waitForRoom(int delta);

    /**
     * After a wait on its socket: consumes the peer's wake-ups and notes a closed socket. @return whether anything was
     * there
     */
    protected abstract boolean drainWakeups(ByteBuffer scratch);
}
