package dev.kolo.runtime.internal.collectives.generation;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Cached little-endian duplicates of the last buffer used, so a reused buffer costs no allocation. */
final class BufferViews {
    private ByteBuffer source;
    ByteBuffer read;
    ByteBuffer write;

    BufferViews of(ByteBuffer buffer) {
        if (buffer != source) {
            source = buffer;
            read = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            write = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }
        return this;
    }

    void clear() {
        source = null;
        read = null;
        write = null;
    }
}
