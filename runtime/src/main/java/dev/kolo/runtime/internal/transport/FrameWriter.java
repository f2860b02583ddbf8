package dev.kolo.runtime.internal.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends one frame at a time with a gathering write of header and payload straight from the caller's
 * buffers (no copy): one buffer, or several tensors' buffers one after the other. Reused for every frame of
 * the link: nothing is allocated per frame.
 */
public final class FrameWriter {
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    /** Header, then the payload's slices; grown (once) when a frame needs more slices. */
    private ByteBuffer[] frame = new ByteBuffer[2];
    private int parts = 1; // the header alone: reset() before any frame must find nothing to clear
    private boolean busy;
    /** Whether the stream is between frames: false from a frame's start until its last byte is sent. */
    private boolean betweenFrames = true;

    /** Starts a frame whose payload is {@code view[offset, offset + length)}; the view's cursors are used. */
    public void begin(long generation, long seq, int chunk, ByteBuffer view, int offset, int length) {
        beginSlices(generation, seq, chunk, length);
        slice(view, offset, length);
    }

    /** Starts a frame of {@code length} payload bytes taken from the slices added next with {@link #slice}. */
    public void beginSlices(long generation, long seq, int chunk, int length) {
        header.clear();
        header.putLong(generation).putLong(seq).putInt(chunk).putInt(length).flip();
        frame[0] = header;
        parts = 1;
        busy = true;
        betweenFrames = false;
        fresh = true;
    }

    /** No byte of the current frame has been written yet. */
    private boolean fresh;

    /** Adds {@code view[offset, offset + length)} as the next part of the payload; its cursors are used. */
    public void slice(ByteBuffer view, int offset, int length) {
        if (parts == frame.length) {
            frame = Arrays.copyOf(frame, 2 * parts);
        }
        view.limit(offset + length).position(offset);
        frame[parts++] = view;
    }

    /**
     * Writes what the socket takes now; the frame is done once all of it has reached the socket (with TLS,
     * its last record too). @return bytes written (0 when the socket buffer is full)
     */
    public long pump(Wire w) throws IOException {
        if (fresh) {
            fresh = false;
            if (w instanceof MappedWire shm) {
                shm.writingFrame();
            }
        }
        long n = w.write(frame, 0, parts);
        if (!frame[parts - 1].hasRemaining() && !header.hasRemaining() && w.flushed()) {
            done();
            betweenFrames = true;
        }
        return n;
    }

    /**
     * Writes an abort notice naming {@code lostRank}, after the rest of a frame cut short by the failure (the
     * peer meets the notice where it expects a header), giving up at {@code deadlineNanos}: the connection is
     * closed next. On the failure path only; allocates, and polls a socket that is full.
     *
     * @return whether the whole notice reached the socket
     */
    public boolean notice(Wire w, long generation, int lostRank, long deadlineNanos) throws IOException {
        while (busy && pump(w) == 0) {
            if (System.nanoTime() - deadlineNanos > 0) {
                return false;
            }
            LockSupport.parkNanos(NOTICE_POLL_NANOS);
        }
        if (!betweenFrames) {
            return false; // the frame was reset: its rest is gone
        }
        betweenFrames = false;
        if (w instanceof MappedWire shm) {
            shm.writingFrame();
        }
        ByteBuffer notice = ByteBuffer.allocate(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        notice.putLong(generation).putLong(lostRank).putInt(Frame.ABORT_NOTICE_CHUNK).putInt(0).flip();
        ByteBuffer[] parts = {notice};
        while (w.write(parts, 0, 1) >= 0 && (notice.hasRemaining() || !w.flushed())) {
            if (System.nanoTime() - deadlineNanos > 0) {
                return false;
            }
            LockSupport.parkNanos(NOTICE_POLL_NANOS);
        }
        return true;
    }

    /** How long a notice waits between tries on a full socket. */
    private static final long NOTICE_POLL_NANOS = 100_000;

    public boolean busy() {
        return busy;
    }

    /** The frame is sent: keep no reference to the caller's buffers between frames. */
    private void done() {
        busy = false;
        Arrays.fill(frame, 1, parts, null);
        parts = 1;
    }

    public void reset() {
        done();
    }
}
