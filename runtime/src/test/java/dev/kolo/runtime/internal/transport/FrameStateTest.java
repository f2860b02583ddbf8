package dev.kolo.runtime.internal.transport;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * An op that fails before a link's first frame (a peer lost, or the ring aborted, between send and receive)
 * resets that link's reader and writer in its cleanup: the reset must leave the op's own error to surface,
 * not replace it with one of its own (it once threw IllegalArgumentException there, so a lost peer looked
 * like a bug to the caller and an elastic job did not regroup).
 */
class FrameStateTest {
    @Test
    void resetBeforeAnyFrameIsANoOp() {
        FrameReader reader = new FrameReader();
        FrameWriter writer = new FrameWriter();
        assertDoesNotThrow(reader::reset);
        assertDoesNotThrow(writer::reset);
        assertFalse(reader.busy());
        assertFalse(writer.busy());
    }
}
