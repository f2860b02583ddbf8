package dev.kolo.runtime.internal.transport;

/**
 * Data frame header, little-endian: generation (8), op sequence (8), chunk index (4), payload length (4).
 * Both sides derive every frame's header from the agreed op, so the receiver checks all four fields.
 *
 * <p>One header is not a data frame: the <em>abort notice</em> (chunk index {@link #ABORT_NOTICE_CHUNK}, no
 * payload, the op sequence field holding the lost rank or -1) that a rank whose op failed writes to each peer
 * before closing its connections. It is only written between frames, so the peer meets it where it expects a
 * header: the rank that reacts to a closed connection learns which rank was lost, instead of naming the
 * neighbour that merely closed its connections in turn.
 */
public final class Frame {
    public static final int GENERATION = 0;
    public static final int SEQUENCE = 8;
    public static final int CHUNK = 16;
    public static final int LENGTH = 20;
    public static final int HEADER_BYTES = 24;
    /** The chunk index of an abort notice: no data frame has a negative one. */
    public static final int ABORT_NOTICE_CHUNK = -1;
    /** What {@link FrameReader#noticedLostRank(long)} returns for a header that is not an abort notice. */
    public static final int NOT_A_NOTICE = Integer.MIN_VALUE;

    private Frame() {
    }
}
