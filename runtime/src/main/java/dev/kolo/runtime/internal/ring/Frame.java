package dev.kolo.runtime.internal.ring;

/**
 * Data frame header, little-endian: generation (8), op sequence (8), chunk index (4), payload length (4).
 * Both sides derive every frame's header from the agreed op, so the receiver checks all four fields.
 */
final class Frame {
    static final int GENERATION = 0;
    static final int SEQUENCE = 8;
    static final int CHUNK = 16;
    static final int LENGTH = 20;
    static final int HEADER_BYTES = 24;

    private Frame() {
    }
}
