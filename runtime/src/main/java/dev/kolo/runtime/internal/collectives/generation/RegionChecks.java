package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;
import java.util.Objects;

/** The checks every collective makes of its arguments before any byte moves, so a bad call fails alone. */
final class RegionChecks {
    private RegionChecks() {
    }

    /** An allreduce of {@code count} elements of {@code dtype} at byte {@code offset} of {@code buffer}. */
    static void checkAllreduce(ByteBuffer buffer, int offset, int count, DType dtype, ReduceOp op) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        checkRegion(buffer, offset, (long) count * dtype.byteSize(), "allreduce");
        if (op == ReduceOp.ADASUM) {
            requireAdasumType(dtype);
        }
    }

    /**
     * An allreduce over segments {@code views[s][0, lengths[s])}, each with a distinct second view.
     *
     * @return the segments' total bytes
     */
    static long checkSegments(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments, DType dtype,
            ReduceOp op) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        long total = 0;
        for (int s = 0; s < segments; s++) {
            if (lengths[s] % dtype.byteSize() != 0 || sendViews[s] == views[s]) {
                throw new IllegalArgumentException("segment " + s + " of an allreduce: its length " + lengths[s]
                        + " is not a whole number of " + dtype + " elements, or its two views are one buffer object");
            }
            checkRegion(sendViews[s], lengths[s], "allreduce segment " + s);
            checkRegion(views[s], lengths[s], "allreduce segment " + s);
            total += lengths[s];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("an allreduce of " + total + " bytes exceeds " + Integer.MAX_VALUE);
        }
        if (op == ReduceOp.ADASUM) {
            requireAdasumType(dtype);
            if (segments != 1) {
                // Each tensor has its own dot products: the engine never fuses Adasum tensors.
                throw new IllegalArgumentException("an Adasum allreduce takes one tensor, not " + segments);
            }
        }
        return total;
    }

    private static void requireAdasumType(DType dtype) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("Adasum combines floating-point gradients, not " + dtype);
        }
    }

    /** @return the bytes of an allgather of blocks of {@code byteCounts} bytes (one per rank) in {@code buffer} */
    static long checkAllgather(ByteBuffer buffer, int[] byteCounts, int size) {
        if (byteCounts != null && byteCounts.length != size) {
            throw new IllegalArgumentException("byteCounts has " + byteCounts.length + " entries for " + size + " ranks");
        }
        long total = sumChecked(byteCounts, "byteCounts");
        checkRegion(buffer, total, "allgather");
        return total;
    }

    static void checkBroadcast(ByteBuffer buffer, int offset, int bytes, int root, int size) {
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root rank " + root + " is not in [0, " + size + ")");
        }
        checkRegion(buffer, offset, bytes, "broadcast");
    }

    /** @return the elements of a reducescatter of blocks of {@code counts} elements (one per rank) in {@code buffer} */
    static long checkReducescatter(ByteBuffer buffer, DType dtype, int[] counts, ReduceOp op, int size) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(op, "op");
        checkLength(counts, size, "counts");
        long total = sumChecked(counts, "counts");
        checkRegion(buffer, total * dtype.byteSize(), "reducescatter");
        return total;
    }

    /** An alltoall of blocks {@code sendBytes} out of {@code send}, {@code recvBytes} into {@code recv}, as rank {@code rank}. */
    static void checkAlltoall(ByteBuffer send, int[] sendBytes, ByteBuffer recv, int[] recvBytes, int size, int rank) {
        checkLength(sendBytes, size, "sendBytes");
        checkLength(recvBytes, size, "recvBytes");
        checkRegion(send, sumChecked(sendBytes, "sendBytes"), "alltoall send");
        checkRegion(recv, sumChecked(recvBytes, "recvBytes"), "alltoall recv");
        if (send == recv) {
            throw new IllegalArgumentException("alltoall send and recv buffers must differ");
        }
        if (sendBytes[rank] != recvBytes[rank]) {
            throw new IllegalArgumentException("alltoall: this rank sends itself " + sendBytes[rank]
                    + " bytes but expects " + recvBytes[rank]);
        }
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
