package dev.kolo.runtime.internal.collectives;

import java.nio.ByteBuffer;
import java.util.Objects;

/** The checks every collective makes of its arguments before any byte moves, so a bad call fails alone. */
final class RegionChecks {
    private RegionChecks() {
    }

    static void checkLength(int[] a, int size, String what) {
        Objects.requireNonNull(a, what);
        if (a.length != size) {
            throw new IllegalArgumentException(what + " has " + a.length + " entries for " + size + " ranks");
        }
    }

    static long sumChecked(int[] counts, String what) {
        Objects.requireNonNull(counts, what);
        long total = 0;
        for (int c : counts) {
            if (c < 0) {
                throw new IllegalArgumentException(what + " has a negative entry");
            }
            total += c;
        }
        return total;
    }

    static void checkRegion(ByteBuffer b, long bytes, String op) {
        checkRegion(b, 0, bytes, op);
    }

    static void checkRegion(ByteBuffer b, int offset, long bytes, String op) {
        Objects.requireNonNull(b, "buffer");
        if (!b.isDirect() || b.isReadOnly()) {
            throw new IllegalArgumentException(op + " needs a direct, writable buffer");
        }
        if (offset < 0 || bytes < 0 || offset + bytes > b.capacity()) {
            throw new IllegalArgumentException(op + " of " + bytes + " bytes at " + offset + " does not fit a buffer of "
                    + b.capacity() + " bytes");
        }
    }

    /**
     * Element counts per rank for a reducescatter of a tensor with {@code rows} rows of {@code rowElements}
     * elements: rank r gets {@code rows / size} rows, the first {@code rows % size} ranks one more.
     */
    static int[] reducescatterCounts(long rows, long rowElements, int size) {
        int[] counts = new int[size];
        for (int r = 0; r < size; r++) {
            long myRows = rows / size + (r < rows % size ? 1 : 0);
            counts[r] = Math.toIntExact(myRows * rowElements);
        }
        return counts;
    }

    /** Copies counts the engine keeps as longs into a reused int array (every count fits a buffer). */
    static int[] toInts(long[] values, int[] into) {
        for (int i = 0; i < values.length; i++) {
            into[i] = Math.toIntExact(values[i]);
        }
        return into;
    }
}
