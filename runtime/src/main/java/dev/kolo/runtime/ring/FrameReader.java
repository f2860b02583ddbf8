package dev.kolo.runtime.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ScatteringByteChannel;

/**
 * Receives one frame at a time with a scattering read of header and exactly the expected payload into
 * its destination (the caller's buffer, or a staging chunk to be reduced), then checks the header. The
 * header's length field is only compared, never used to size anything: the receiver knows every frame's
 * length from the agreed op. The header can be checked as soon as it is complete ({@link #headerComplete}),
 * so a peer that sends a wrong header and then nothing is caught at once instead of at the progress deadline.
 */
final class FrameReader {
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] frame = new ByteBuffer[2];
    private boolean busy;
    private boolean headerChecked;
    private int expectedLength;

    void begin(ByteBuffer view, int offset, int length) {
        header.clear();
        view.limit(offset + length).position(offset);
        frame[0] = header;
        frame[1] = view;
        expectedLength = length;
        busy = true;
        headerChecked = false;
    }

    /** @return bytes read, or -1 at end of stream */
    long pump(ScatteringByteChannel ch) throws IOException {
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

    /** @return whether the header has arrived and has not been checked yet */
    boolean headerComplete() {
        return !headerChecked && !header.hasRemaining();
    }

    /**
     * Checks the header against the frame the agreed op calls for; call once the header is complete.
     *
     * @return null when it is the expected one, else which field differs, with both values
     */
    String check(long generation, long seq, int chunk) {
        headerChecked = true;
        long g = header.getLong(0);
        long s = header.getLong(8);
        int c = header.getInt(16);
        int len = header.getInt(20);
        String field = g != generation ? "generation" : s != seq ? "op sequence" : c != chunk ? "chunk index"
                : len != expectedLength ? "payload length" : null;
        if (field == null) {
            return null;
        }
        return "frame field " + field + " is wrong: expected frame (generation " + generation + ", op " + seq
                + ", chunk " + chunk + ", " + expectedLength + " bytes) but received (generation " + g + ", op " + s
                + ", chunk " + c + ", " + len + " bytes)";
    }

    void reset() {
        busy = false;
        headerChecked = false;
        frame[1] = null;
    }
}
