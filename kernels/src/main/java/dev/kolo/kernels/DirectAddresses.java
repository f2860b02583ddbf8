package dev.kolo.kernels;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;

/**
 * Remembers the native address of recently used direct buffers, so a collective that reduces
 * into the same few buffers over and over asks JNI for each address once. A direct buffer's
 * address never changes; weak references keep the cache from holding buffers alive.
 */
final class DirectAddresses {

    private static final int SLOTS = 16; // power of two

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

    long of(ByteBuffer buf) {
        int slot = System.identityHashCode(buf) & (SLOTS - 1);
        Entry e = slots[slot];
        if (e != null && e.buffer.get() == buf) {
            return e.address;
        }
        long address = NativeKernels.address(buf);
        slots[slot] = new Entry(buf, address);
        return address;
    }
}
