package dev.kolo.runtime.internal.transport.shm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A single-producer single-consumer byte stream in shared memory (Agrona's one-to-one ring buffer, as a stream
 * rather than records): one rank writes, its co-located peer reads. The control block holds the two cursors and the
 * two wait counters, each on a cache line of its own: a cursor moves at every frame, a counter only when a side
 * parks, and each side looks at the other's counter after every move of its cursor, so a counter beside a cursor
 * would cross between the cores at every frame (and the cursor's line back with it):
 *
 * <pre>
 *   +0    tail            bytes ever written (writer's; release on publish)
 *   +8    streaming       the writer streams its large pieces past its caches now (writer's; changes rarely)
 *   +64   writersWaiting  threads of the writer's process parked for room (writer's side)
 *   +128  head            bytes ever read (reader's; release on consume)
 *   +192  readersWaiting  threads of the reader's process parked for bytes (reader's side)
 *   +196  readPlain       the reader's cost per byte of reading plainly written pieces (float; reader's side,
 *   +200  readStreamed    and of streamed ones: written every few large reads, on the line the writer reads after
 *                         every write anyway)
 *   +256  data            capacity bytes, a power of two; byte i of the stream at i mod capacity
 * </pre>
 *
 * <p>Waking a parked peer is the caller's business ({@link SharedMemoryWire}): a side about to park raises its
 * counter, then looks again; a side that moved a cursor looks at the other side's counter afterwards. Both are
 * volatile (sequentially consistent) accesses, so at least one of the two sees the other: no wake-up is lost.
 */
public final class SharedRing {
    /** Bytes of the control block before the data. */
    public static final int CONTROL_BYTES = 256;
    private static final int TAIL = 0;
    private static final int WRITERS_WAITING = 64;
    private static final int HEAD = 128;
    private static final int READERS_WAITING = 192;
    private static final int STREAMING = 8;
    private static final int READ_PLAIN = 196;
    private static final int READ_STREAMED = 200;
    /** Smallest data region: the largest frame posted without waiting for the peer (a direct exchange) fits. */
    public static final int MIN_CAPACITY = 64 * 1024;
    /** Largest data region, so that a segment of two rings stays well within one mapping. */
    public static final int MAX_CAPACITY = 256 << 20;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final ByteBuffer control;
    private final ByteBuffer data;
    private final int capacity;
    private final int mask;
    private final PeerCopy copy;
    /** Copies of at least this many bytes are timed for the choice of way ({@code KOLO_SHM_STREAM=auto}); 0: none. */
    private final int timedFromBytes;
    /** The writer's way of copying (auto only), and the reader's costs it weighs. */
    private final StreamingChoice choice;
    private final CopyCosts reads;
    /** The writer's copy of tail, or the reader's copy of head: only this side moves it. */
    private long own;
    /** The last value of the other side's cursor this side read: refreshed only when it seems to block. */
    private long seen;
    /**
     * The next byte starts a frame, which begins at a multiple of {@link #FRAME_ALIGNMENT}: the writer skips to it
     * before writing and the reader before reading, so every frame's header and payload lie aligned for any element
     * type, in place.
     */
    private boolean frameStart;
    /** Frames start at multiples of this many bytes of the stream (the widest element); the capacity is a multiple. */
    static final int FRAME_ALIGNMENT = 8;

    /**
     * @param region {@code CONTROL_BYTES + capacity} bytes of a mapping (direct, 64-byte aligned); its position and
     *        limit are ignored
     * @param capacity a power of two from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY}
     * @param writer whether this side writes (else it reads)
     */
    public SharedRing(ByteBuffer region, int offset, int capacity, boolean writer) {
        this(region, offset, capacity, writer, PeerCopy.plain());
    }

    /**
     * @param region {@code CONTROL_BYTES + capacity} bytes of a mapping (direct, 64-byte aligned); its position and
     *        limit are ignored
     * @param capacity a power of two from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY}
     * @param writer whether this side writes (else it reads)
     * @param copy how the writer copies bytes in
     */
    public SharedRing(ByteBuffer region, int offset, int capacity, boolean writer, PeerCopy copy) {
        if (Integer.bitCount(capacity) != 1 || capacity < MIN_CAPACITY || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("ring capacity must be a power of two from " + MIN_CAPACITY + " to "
                    + MAX_CAPACITY + ": " + capacity);
        }
        this.control = region.slice(offset, CONTROL_BYTES).order(ByteOrder.nativeOrder());
        this.data = region.slice(offset + CONTROL_BYTES, capacity).order(ByteOrder.LITTLE_ENDIAN); // the kernels read it in place
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.copy = copy;
        this.timedFromBytes = copy.timedFromBytes();
        this.choice = writer && timedFromBytes > 0 ? new StreamingChoice() : null;
        this.reads = !writer && timedFromBytes > 0 ? new CopyCosts() : null;
        if (writer) {
            own = (long) LONGS.getVolatile(control, TAIL);
            seen = (long) LONGS.getVolatile(control, HEAD);
        } else {
            own = (long) LONGS.getVolatile(control, HEAD);
            seen = (long) LONGS.getVolatile(control, TAIL);
        }
    }

    /** @return bytes a ring of {@code capacity} takes in a segment */
    public static long footprint(int capacity) {
        return CONTROL_BYTES + (long) capacity;
    }

    // ------------------------------------------------------------------------------------------- writer side

    /**
     * Copies what fits of {@code srcs[offset, offset + length)} into the ring (their positions advance) and publishes
     * it. @return bytes written, 0 when the ring is full
     */
    long write(ByteBuffer[] srcs, int offset, int length) {
        int pad = frameStart ? (int) (-own & (FRAME_ALIGNMENT - 1)) : 0;
        long room = capacity - (own - seen);
        if (room <= pad) {
            seen = (long) LONGS.getAcquire(control, HEAD);
            room = capacity - (own - seen);
            if (room <= pad) {
                return 0;
            }
        }
        if (frameStart) {
            own += pad; // skipped bytes: published with the frame's first ones
            room -= pad;
            frameStart = false;
        }
        boolean streaming = choice != null && choice.streaming();
        long start = choice != null && largest(srcs, offset, length) >= timedFromBytes ? System.nanoTime() : 0;
        long written = 0;
        for (int i = offset; i < offset + length && room > 0; i++) {
            ByteBuffer src = srcs[i];
            int n = (int) Math.min(src.remaining(), room);
            if (n > 0) {
                copyIn(src, n, streaming);
                written += n;
                room -= n;
            }
        }
        if (written > 0) {
            // Volatile, not merely release: the look at the reader's counter that follows must not move before it.
            LONGS.setVolatile(control, TAIL, own);
        }
        if (start != 0 && written >= timedFromBytes) {
            long now = System.nanoTime();
            if (choice.wrote(written, now - start, now, readCost(READ_PLAIN), readCost(READ_STREAMED))) {
                INTS.setRelease(control, STREAMING, choice.streaming() ? 1 : 0);
            }
        }
        return written;
    }

    private static long largest(ByteBuffer[] buffers, int offset, int length) {
        long most = 0;
        for (int i = offset; i < offset + length; i++) {
            most = Math.max(most, buffers[i].remaining());
        }
        return most;
    }

    /** @return the reader's last published cost per byte at {@code at}, NaN if none yet */
    private float readCost(int at) {
        int bits = (int) INTS.getOpaque(control, at);
        return bits == 0 ? Float.NaN : Float.intBitsToFloat(bits);
    }

    private void copyIn(ByteBuffer src, int n, boolean streaming) {
        int at = (int) (own & mask);
        int first = Math.min(n, capacity - at);
        int p = src.position();
        copy.copy(data, at, src, p, first, streaming);
        if (first < n) {
            copy.copy(data, 0, src, p + first, n - first, streaming);
        }
        src.position(p + n);
        own += n;
    }

    /** @return whether the writer could write now (looks at the reader's cursor) */
    boolean hasRoom() {
        if (capacity - (own - seen) > 0) {
            return true;
        }
        seen = (long) LONGS.getVolatile(control, HEAD);
        return capacity - (own - seen) > 0;
    }

    /** @return whether a thread of the reader's process is parked waiting for bytes */
    boolean readersWaiting() {
        return (int) INTS.getVolatile(control, READERS_WAITING) > 0;
    }

    /** A writer thread is about to park for room (+1) or is done waiting (-1). */
    void writersWaiting(int delta) {
        INTS.getAndAdd(control, WRITERS_WAITING, delta);
    }

    // ------------------------------------------------------------------------------------------- reader side

    /**
     * Copies what has arrived into {@code dsts[offset, offset + length)} (their positions advance) and frees that
     * room. @return bytes read, 0 when the ring is empty
     */
    long read(ByteBuffer[] dsts, int offset, int length) {
        int pad = frameStart ? (int) (-own & (FRAME_ALIGNMENT - 1)) : 0;
        long available = seen - own;
        if (available <= pad) {
            seen = (long) LONGS.getAcquire(control, TAIL);
            available = seen - own;
            if (available <= pad) {
                return 0; // the writer publishes a frame's padding with its first bytes
            }
        }
        if (frameStart) {
            own += pad;
            available -= pad;
            frameStart = false;
        }
        long start = reads != null && available >= timedFromBytes ? System.nanoTime() : 0;
        long read = 0;
        for (int i = offset; i < offset + length && available > 0; i++) {
            ByteBuffer dst = dsts[i];
            int n = (int) Math.min(dst.remaining(), available);
            if (n > 0) {
                copyOut(dst, n);
                read += n;
                available -= n;
            }
        }
        if (read > 0) {
            LONGS.setVolatile(control, HEAD, own);
        }
        if (start != 0 && read >= timedFromBytes) {
            long now = System.nanoTime();
            boolean streamed = (int) INTS.getOpaque(control, STREAMING) != 0;
            if (reads.copied(streamed, read, now - start, now)) {
                INTS.setRelease(control, streamed ? READ_STREAMED : READ_PLAIN, Float.floatToRawIntBits(
                        (float) reads.cost(streamed)));
            }
        }
        return read;
    }

    private void copyOut(ByteBuffer dst, int n) {
        int at = (int) (own & mask);
        int first = Math.min(n, capacity - at);
        int p = dst.position();
        dst.put(p, data, at, first);
        if (first < n) {
            dst.put(p + first, data, 0, n - first);
        }
        dst.position(p + n);
        own += n;
    }

    /** The next byte written or read starts a frame: it starts at the next multiple of {@link #FRAME_ALIGNMENT}. */
    void frameStart() {
        frameStart = true;
    }

    /** @return how many bytes wait to be read (looks at the writer's cursor when fewer than {@code atLeast} seemed to) */
    long available(long atLeast) {
        long n = seen - own;
        if (n < atLeast) {
            seen = (long) LONGS.getAcquire(control, TAIL);
            n = seen - own;
        }
        return n;
    }

    /** @return where in {@link #data()} the next byte to read lies */
    int readOffset() {
        return (int) (own & mask);
    }

    /** Frees the next {@code n} bytes, which the reader used where they lay (at least that many are there). */
    void consume(int n) {
        own += n;
        LONGS.setVolatile(control, HEAD, own);
    }

    /** @return the data region (absolute offsets from 0, capacity bytes); for reading in place */
    ByteBuffer data() {
        return data;
    }

    /** @return whether bytes wait to be read (looks at the writer's cursor); any thread of the reader's process */
    boolean hasBytes() {
        return (long) LONGS.getVolatile(control, TAIL) != (long) LONGS.getVolatile(control, HEAD);
    }

    /** @return whether a thread of the writer's process is parked waiting for room */
    boolean writersWaiting() {
        return (int) INTS.getVolatile(control, WRITERS_WAITING) > 0;
    }

    /** A reader thread is about to park for bytes (+1) or is done waiting (-1). */
    void readersWaiting(int delta) {
        INTS.getAndAdd(control, READERS_WAITING, delta);
    }

    /** @return the data region's size in bytes */
    public int capacity() {
        return capacity;
    }
}
