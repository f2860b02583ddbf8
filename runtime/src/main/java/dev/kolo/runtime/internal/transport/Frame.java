package dev.kolo.runtime.internal.transport;

/**
 * Data frame header, little-endian: generation (8), op sequence (8), chunk index (4), payload length (4).
 * Both sides derive every frame's header from the agreed op, so the receiver checks all four fields.
 */
public final class Frame {
    public static final int GENERATION = 0;
    public static final int SEQUENCE = 8;
    public static final int CHUNK = 16;
    public static final int LENGTH = 20;
    public static final int HEADER_BYTES = 24;

    private Frame() {
    }
}
