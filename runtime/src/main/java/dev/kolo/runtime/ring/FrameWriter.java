package dev.kolo.runtime.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Sends one frame at a time with a gathering write of header and payload straight from the caller's
 * buffer (no copy). Reused for every frame of the link: nothing is allocated per frame.
 */
final class FrameWriter {
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] frame = new ByteBuffer[2];
    private boolean busy;

    /** Starts a frame whose payload is {@code view[offset, offset + length)}; the view's cursors are used. */
    void begin(long generation, long seq, int chunk, ByteBuffer view, int offset, int length) {
        header.clear();
        header.putLong(generation).putLong(seq).putInt(chunk).putInt(length).flip();
        view.limit(offset + length).position(offset);
        frame[0] = header;
        frame[1] = view;
        busy = true;
    }

    /**
     * Writes what the socket takes now; the frame is done once all of it has reached the socket (with TLS,
     * its last record too). @return bytes written (0 when the socket buffer is full)
     */
    long pump(Wire w) throws IOException {
        long n = w.write(frame, 0, 2);
        if (!frame[1].hasRemaining() && !header.hasRemaining() && w.flushed()) {
            busy = false;
            frame[1] = null; // do not keep the caller's buffer reachable between ops
        }
        return n;
    }

    boolean busy() {
        return busy;
    }

    void reset() {
        busy = false;
        frame[1] = null;
    }
}
