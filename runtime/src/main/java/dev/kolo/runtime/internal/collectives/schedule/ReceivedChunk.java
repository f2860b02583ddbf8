package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import java.nio.ByteBuffer;

/**
 * Reduces a received chunk into a region from wherever the transport left it ({@link FrameReader#beginInPlace}): the
 * staging buffer, or a shared-memory ring, read where it lies. A chunk in a ring may wrap at the ring's end; frames
 * start aligned there for every element type, so the wrap falls between elements and the two pieces are reduced one
 * after the other.
 */
final class ReceivedChunk {
    private ReceivedChunk() {
    }

    /** {@code region[from, to) = region[from, to) op} the chunk the reader's last in-place frame holds. */
    static void reduceInto(Region region, Reducer reducer, DType dtype, ReduceOp op, int from, int to, FrameReader r) {
        ByteBuffer src = r.payload();
        int at = r.payloadOffset();
        int first = Math.min(to - from, src.capacity() - at);
        region.reduce(reducer, dtype, op, from, from + first, src, at);
        if (from + first < to) {
            if (first % dtype.byteSize() != 0) {
                throw new IllegalStateException("a chunk of " + dtype + " wraps in the middle of an element at byte "
                        + first + ": shared-memory frames must start aligned");
            }
            region.reduce(reducer, dtype, op, from + first, to, src, 0);
        }
    }
}
