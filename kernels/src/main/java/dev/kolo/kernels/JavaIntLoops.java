package dev.kolo.kernels;

import static dev.kolo.kernels.JavaKernels.REDUCE;
import static dev.kolo.kernels.JavaKernels.SCALE;
import static dev.kolo.kernels.Scratch.CHUNK;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;

/**
 * Java loops for the integer types. Sums and products wrap (Java's int/long arithmetic, cast
 * back to byte for 8-bit types); scaling is done in double, truncated and saturated to the type.
 */
final class JavaIntLoops {

    private JavaIntLoops() {
    }

    static void int8(boolean unsigned, ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src,
                     int srcOffset, int count, int mode, double factor) {
        Scratch scratch = Scratch.get();
        byte[] a = scratch.bytesA();
        byte[] b = scratch.bytesB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            dst.get(dstOffset + base, a, 0, m);
            if (mode != SCALE) {
                src.get(srcOffset + base, b, 0, m);
                combine8(op, unsigned, a, b, m);
            }
            if (mode != REDUCE) {
                scale8(unsigned, a, m, factor);
            }
            dst.put(dstOffset + base, a, 0, m);
        }
    }

    static void int32(ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                      int count, int mode, double factor) {
        IntBuffer d = JavaKernels.ints(dst, dstOffset, count, 0);
        IntBuffer s = mode == SCALE ? null : JavaKernels.ints(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 4);
        int si = JavaKernels.firstIndex(srcOffset, 4);
        Scratch scratch = Scratch.get();
        int[] a = scratch.intsA();
        int[] b = scratch.intsB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            d.get(di + base, a, 0, m);
            if (mode != SCALE) {
                s.get(si + base, b, 0, m);
                combine32(op, a, b, m);
            }
            if (mode != REDUCE) {
                for (int i = 0; i < m; i++) {
                    a[i] = (int) (a[i] * factor); // (int) truncates and saturates, NaN -> 0
                }
            }
            d.put(di + base, a, 0, m);
        }
    }

    static void int64(ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                      int count, int mode, double factor) {
        LongBuffer d = JavaKernels.longs(dst, dstOffset, count, 0);
        LongBuffer s = mode == SCALE ? null : JavaKernels.longs(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 8);
        int si = JavaKernels.firstIndex(srcOffset, 8);
        Scratch scratch = Scratch.get();
        long[] a = scratch.longsA();
        long[] b = scratch.longsB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            d.get(di + base, a, 0, m);
            if (mode != SCALE) {
                s.get(si + base, b, 0, m);
                combine64(op, a, b, m);
            }
            if (mode != REDUCE) {
                for (int i = 0; i < m; i++) {
                    a[i] = (long) (a[i] * factor);
                }
            }
            d.put(di + base, a, 0, m);
        }
    }

    private static void combine8(ReductionOp op, boolean unsigned, byte[] a, byte[] b, int m) {
        switch (op) {
            case SUM:
                for (int i = 0; i < m; i++) {
                    a[i] = (byte) (a[i] + b[i]);
                }
                break;
            case PRODUCT:
                for (int i = 0; i < m; i++) {
                    a[i] = (byte) (a[i] * b[i]);
                }
                break;
            case MIN:
                if (unsigned) {
                    for (int i = 0; i < m; i++) {
                        a[i] = (a[i] & 0xFF) <= (b[i] & 0xFF) ? a[i] : b[i];
                    }
                } else {
                    for (int i = 0; i < m; i++) {
                        a[i] = (byte) Math.min(a[i], b[i]);
                    }
                }
                break;
            case MAX:
                if (unsigned) {
                    for (int i = 0; i < m; i++) {
                        a[i] = (a[i] & 0xFF) >= (b[i] & 0xFF) ? a[i] : b[i];
                    }
                } else {
                    for (int i = 0; i < m; i++) {
                        a[i] = (byte) Math.max(a[i], b[i]);
                    }
                }
                break;
            default:
                throw new IllegalArgumentException("unsupported op " + op);
        }
    }

    private static void scale8(boolean unsigned, byte[] a, int m, double factor) {
        int lo = unsigned ? 0 : Byte.MIN_VALUE;
        int hi = unsigned ? 255 : Byte.MAX_VALUE;
        int mask = unsigned ? 0xFF : -1;
        for (int i = 0; i < m; i++) {
            int v = (int) ((a[i] & mask) * factor);
            a[i] = (byte) Math.max(lo, Math.min(hi, v));
        }
    }

    private static void combine32(ReductionOp op, int[] a, int[] b, int m) {
        switch (op) {
            case SUM:
                for (int i = 0; i < m; i++) {
                    a[i] = a[i] + b[i];
                }
                break;
            case PRODUCT:
                for (int i = 0; i < m; i++) {
                    a[i] = a[i] * b[i];
                }
                break;
            case MIN:
                for (int i = 0; i < m; i++) {
                    a[i] = Math.min(a[i], b[i]);
                }
                break;
            case MAX:
                for (int i = 0; i < m; i++) {
                    a[i] = Math.max(a[i], b[i]);
                }
                break;
            default:
                throw new IllegalArgumentException("unsupported op " + op);
        }
    }

    private static void combine64(ReductionOp op, long[] a, long[] b, int m) {
        switch (op) {
            case SUM:
                for (int i = 0; i < m; i++) {
                    a[i] = a[i] + b[i];
                }
                break;
            case PRODUCT:
                for (int i = 0; i < m; i++) {
                    a[i] = a[i] * b[i];
                }
                break;
            case MIN:
                for (int i = 0; i < m; i++) {
                    a[i] = Math.min(a[i], b[i]);
                }
                break;
            case MAX:
                for (int i = 0; i < m; i++) {
                    a[i] = Math.max(a[i], b[i]);
                }
                break;
            default:
                throw new IllegalArgumentException("unsupported op " + op);
        }
    }
}
