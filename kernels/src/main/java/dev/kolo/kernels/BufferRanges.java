package dev.kolo.kernels;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/** Argument checks shared by both implementations, so they fail identically. */
final class BufferRanges {

    private BufferRanges() {
    }

    /** Checks a range of {@code count} elements of {@code elementSize} bytes; returns its length in bytes. */
    static int checkRead(ByteBuffer buf, long byteOffset, long count, int elementSize) {
        Objects.requireNonNull(buf, "buffer");
        if (!buf.isDirect()) {
            throw new IllegalArgumentException("kernels need a direct ByteBuffer");
        }
        if (count < 0) {
            throw new IllegalArgumentException("negative count " + count);
        }
        if (count > Integer.MAX_VALUE / elementSize) {
            throw new IndexOutOfBoundsException("count " + count + " exceeds any ByteBuffer");
        }
        long length = count * elementSize;
        Objects.checkFromIndexSize(byteOffset, length, buf.limit());
        return (int) length;
    }

    /** As {@link #checkRead}, and the buffer must be writable. */
    static int checkWrite(ByteBuffer buf, long byteOffset, long count, int elementSize) {
        int length = checkRead(buf, byteOffset, count, elementSize);
        if (buf.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        return length;
    }
}
