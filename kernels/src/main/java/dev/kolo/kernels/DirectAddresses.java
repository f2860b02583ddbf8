package dev.kolo.kernels;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;

/**
 * Remembers the native address of recently used direct buffers, so a collective that reduces
 * into the same few buffers over and over asks JNI for each address once. A direct buffer's
 * address never changes; weak references keep the cache from holding buffers alive.
 */
final class DirectAddresses {

    /** Power of two; a process reduces into and from a few dozen buffers at most (tensors, staging, shared rings). */
    private static final int SLOTS = 64;
    /** Slots looked at from a buffer's own: neighbours take what would collide. */
    private static final int PROBES = 4;

    private static final class Entry {
        final WeakReference<ByteBuffer> buffer;
        final long address;

        Entry(ByteBuffer buffer, long address) {
            this.buffer = new WeakReference<>(buffer);
            this.address = address;
        }
    }

    // Racy by design: an Entry is immutable (final fields publish safely), a lost update only
    // costs a JNI call.
    private final Entry[] slots = new Entry[SLOTS];
    private int evict;

    long of(ByteBuffer buf) {
        int home = System.identityHashCode(buf);
        int free = -1;
        for (int i = 0; i < PROBES; i++) {
            int slot = (home + i) & (SLOTS - 1);
            Entry e = slots[slot];
            if (e == null) {
                free = free < 0 ? slot : free;
                continue;
            }
            ByteBuffer b = e.buffer.get();
            if (b == buf) {
                return e.address;
            }
            if (b == null && free < 0) {
                free = slot; // collected: its slot is free again
            }
        }
        long address = NativeKernels.address(buf);
        int slot = free >= 0 ? free : (home + (evict++ & (PROBES - 1))) & (SLOTS - 1);
        slots[slot] = new Entry(buf, address);
        return address;
    }
}
