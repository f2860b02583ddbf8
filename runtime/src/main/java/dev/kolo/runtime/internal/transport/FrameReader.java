package dev.kolo.runtime.internal.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ScatteringByteChannel;
import java.util.Arrays;

/**
 * Receives one frame at a time with a scattering read of header and exactly the expected payload into
 * its destination (the caller's buffer, a staging chunk to be reduced, or several tensors' buffers one after
 * the other), then checks the header. The header's length field is only compared, never used to size
 * anything: the receiver knows every frame's length from the agreed op. The header can be checked as soon as
 * it is complete ({@link #headerComplete}), so a peer that sends a wrong header and then nothing is caught at
 * once instead of at the progress deadline.
 */
public final class FrameReader {
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    /** Header, then the payload's slices; grown (once) when a frame needs more slices. */
    private ByteBuffer[] frame = new ByteBuffer[2];
    private int parts = 1; // the header alone: reset() before any frame must find nothing to clear
    private boolean busy;
    private boolean headerChecked;
    private int expectedLength;
    /** For a frame of variable length: its most bytes, else -1 (the length is known from the agreed op). */
    private int maxLength = -1;
    private boolean variable;
    private ByteBuffer variableView;
    private int variableOffset;
    /** The frame's payload may be used where it lies, if the wire is shared memory: see {@link #beginInPlace}. */
    private boolean inPlace;
    /** No byte of the current frame has been read yet. */
    private boolean fresh;
    /** The payload lies in a shared ring and must be given back once used ({@link #release}). */
    private MappedWire heldBy;
    /** Where the last payload is: the staging buffer (offset 0), or a shared ring's data from an offset. */
    private ByteBuffer payload;
    private int payloadOffset;

    public void begin(ByteBuffer view, int offset, int length) {
        beginSlices(length);
        slice(view, offset, length);
    }

    /**
     * Starts a frame of {@code length} payload bytes that the caller only reads, once it has arrived, from
     * {@link #payload()} at {@link #payloadOffset()} (a reduction), then gives back with {@link #release}. On a socket
     * it lands in {@code staging[0, length)}; on a shared-memory wire whose ring holds it, it is used where it lies in
     * the ring, not copied (it may wrap at the ring's end: {@link #payload()}'s capacity).
     */
    public void beginInPlace(ByteBuffer staging, int length) {
        begin(staging, 0, length);
        inPlace = length > 0;
        payload = staging;
        payloadOffset = 0;
    }

    /**
     * Starts a frame of {@code length} payload bytes that land in the slices added next with
     * {@link #slice}, in order.
     */
    public void beginSlices(int length) {
        header.clear();
        frame[0] = header;
        parts = 1;
        expectedLength = length;
        maxLength = -1;
        variable = false;
        inPlace = false;
        busy = true;
        fresh = true;
        headerChecked = false;
    }

    /** Adds {@code view[offset, offset + length)} as the next part of the payload; its cursors are used. */
    public void slice(ByteBuffer view, int offset, int length) {
        if (parts == frame.length) {
            frame = Arrays.copyOf(frame, 2 * parts);
        }
        view.limit(offset + length).position(offset);
        frame[parts++] = view;
    }

    /**
     * Starts a frame whose length the receiver does not know in advance but bounds: its header is read alone,
     * its length field checked against {@code maxLength} ({@link #check}), and only then is the payload read
     * into {@code view[offset, offset + length)}. Nothing beyond the frame is ever read from the stream.
     */
    public void beginUpTo(ByteBuffer view, int offset, int maxLength) {
        header.clear();
        frame[0] = header;
        parts = 1;
        variable = true;
        variableView = view;
        variableOffset = offset;
        this.maxLength = maxLength;
        expectedLength = -1;
        inPlace = false;
        busy = true;
        fresh = true;
        headerChecked = false;
    }

    /** @return the payload length of the frame last read (for a variable frame, what its header said) */
    public int length() {
        return expectedLength;
    }

    /** @return bytes read, or -1 at end of stream */
    public long pump(ScatteringByteChannel ch) throws IOException {
        if (fresh) {
            fresh = false;
            if (ch instanceof MappedWire shm) {
                shm.readingFrame();
            }
        }
        if (variable && parts == 1) {
            return pumpVariableHeader(ch);
        }
        if (inPlace && ch instanceof MappedWire shm && expectedLength <= shm.capacity()) {
            return pumpInPlace(shm);
        }
        long n = ch.read(frame, 0, parts);
        if (n >= 0 && !frame[parts - 1].hasRemaining() && !header.hasRemaining()) {
            done();
        }
        return n;
    }

    /** The header of a variable frame alone; once it is complete and its length fits, the payload follows. */
    private long pumpVariableHeader(ScatteringByteChannel ch) throws IOException {
        long n = ch.read(header);
        if (n < 0 || header.hasRemaining()) {
            return n;
        }
        int length = header.getInt(Frame.LENGTH);
        if (length < 0 || length > maxLength) {
            return n; // stays busy: check() reports the length
        }
        expectedLength = length;
        if (length == 0) {
            done();
            return n;
        }
        slice(variableView, variableOffset, length);
        long m = ch.read(frame, 1, 1);
        if (m >= 0 && !variableView.hasRemaining()) {
            done();
        }
        return m < 0 ? m : n + m;
    }

    /** The header alone; the payload is ready once the ring holds all of it, and is used there. */
    private long pumpInPlace(MappedWire shm) throws IOException {
        long n = 0;
        if (header.hasRemaining()) {
            n = shm.read(frame, 0, 1); // frame[0] is the header
            if (n < 0 || header.hasRemaining()) {
                return n;
            }
        }
        if (shm.payloadReady(expectedLength)) {
            payload = shm.payloadData();
            payloadOffset = shm.payloadOffset();
            heldBy = shm;
            done();
        } else if (n == 0 && shm.endedBefore(expectedLength)) {
            return -1; // the peer's end: the rest of the payload never comes
        }
        return n;
    }

    /** @return where the last frame begun with {@link #beginInPlace} can be read: staging, or a shared ring's data */
    public ByteBuffer payload() {
        return payload;
    }

    /** @return the offset of that frame's payload in {@link #payload()}, wrapping at its capacity */
    public int payloadOffset() {
        return payloadOffset;
    }

    /** The payload used in place is done with: a shared ring gets its room back. Nothing for other frames. */
    public void release() {
        if (heldBy != null) {
            heldBy.consumePayload(expectedLength);
            heldBy = null;
        }
        inPlace = false;
    }

    /** The frame is complete: keep no reference to the caller's buffers between frames. */
    private void done() {
        busy = false;
        Arrays.fill(frame, 1, parts, null);
        parts = 1;
    }

    public boolean busy() {
        return busy;
    }

    /** @return whether no byte of a frame has been read since the last one ended: the stream is between frames */
    public boolean betweenFrames() {
        return !busy || header.position() == 0;
    }

    /** @return whether the header has arrived and has not been checked yet */
    public boolean headerComplete() {
        return !headerChecked && !header.hasRemaining();
    }

    /**
     * Checks the header against the frame the agreed op calls for; call once the header is complete.
     *
     * @return null when it is the expected one, else which field differs, with both values
     */
    public String check(long generation, long seq, int chunk) {
        headerChecked = true;
        long g = header.getLong(Frame.GENERATION);
        long s = header.getLong(Frame.SEQUENCE);
        int c = header.getInt(Frame.CHUNK);
        int len = header.getInt(Frame.LENGTH);
        boolean lengthWrong = maxLength >= 0 ? len < 0 || len > maxLength : len != expectedLength;
        String field = g != generation ? "generation" : s != seq ? "op sequence" : c != chunk ? "chunk index"
                : lengthWrong ? "payload length" : null;
        if (field == null) {
            return null;
        }
        String bytes = maxLength >= 0 ? "at most " + maxLength : Integer.toString(expectedLength);
        return "frame field " + field + " is wrong: expected frame (generation " + generation + ", op " + seq
                + ", chunk " + chunk + ", " + bytes + " bytes) but received (generation " + g + ", op " + s
                + ", chunk " + c + ", " + len + " bytes)";
    }

    /**
     * @return the rank an abort notice of {@code generation} names (-1 when its sender knew no rank), or
     *         {@link Frame#NOT_A_NOTICE} when the header is incomplete or is not such a notice
     */
    public int noticedLostRank(long generation) {
        if (header.hasRemaining() || header.getLong(Frame.GENERATION) != generation
                || header.getInt(Frame.CHUNK) != Frame.ABORT_NOTICE_CHUNK || header.getInt(Frame.LENGTH) != 0) {
            return Frame.NOT_A_NOTICE;
        }
        long lost = header.getLong(Frame.SEQUENCE);
        return lost >= -1 && lost < Integer.MAX_VALUE ? (int) lost : Frame.NOT_A_NOTICE;
    }

    public void reset() {
        done();
        headerChecked = false;
        variable = false;
        variableView = null;
        maxLength = -1;
        inPlace = false;
        heldBy = null;
        payload = null;
    }
}
