package dev.kolo.runtime.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * Receives one frame at a time with a scattering read of header and exactly the expected payload into
 * its destination (the caller's buffer, or a staging chunk to be reduced), then checks the header.
 */
final class FrameReader {
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] frame = new ByteBuffer[2];
    private boolean busy;
    private int expectedLength;

    void begin(ByteBuffer view, int offset, int length) {
        header.clear();
        view.limit(offset + length).position(offset);
        frame[0] = header;
        frame[1] = view;
        expectedLength = length;
        busy = true;
    }

    /** @return bytes read, or -1 at end of stream */
    long pump(SocketChannel ch) throws IOException {
        long n = ch.read(frame, 0, 2);
        if (n >= 0 && !frame[1].hasRemaining() && !header.hasRemaining()) {
            busy = false;
            frame[1] = null;
        }
        return n;
    }

    boolean busy() {
        return busy;
    }

    /** @return null when the completed frame's header is the expected one, else what differs */
    String check(long generation, long seq, int chunk) {
        long g = header.getLong(0);
        long s = header.getLong(8);
        int c = header.getInt(16);
        int len = header.getInt(20);
        if (g == generation && s == seq && c == chunk && len == expectedLength) {
            return null;
        }
        return "expected frame (generation " + generation + ", op " + seq + ", chunk " + chunk + ", " + expectedLength
                + " bytes) but received (generation " + g + ", op " + s + ", chunk " + c + ", " + len + " bytes)";
    }

    void reset() {
        busy = false;
        frame[1] = null;
    }
}
