package dev.kolo.kernels;

import static dev.kolo.kernels.JavaKernels.REDUCE;
import static dev.kolo.kernels.JavaKernels.SCALE;
import static dev.kolo.kernels.Scratch.CHUNK;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;

/** Java loops for float32 and float64; also the float arithmetic the half types reuse. */
final class JavaFloatLoops {

    private JavaFloatLoops() {
    }

    static void float32(ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                        int count, int mode, float factor) {
        FloatBuffer d = JavaKernels.floats(dst, dstOffset, count, 0);
        FloatBuffer s = mode == SCALE ? null : JavaKernels.floats(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 4);
        int si = JavaKernels.firstIndex(srcOffset, 4);
        Scratch scratch = Scratch.get();
        float[] a = scratch.floatsA();
        float[] b = scratch.floatsB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            d.get(di + base, a, 0, m);
            if (mode != SCALE) {
                s.get(si + base, b, 0, m);
                combine(op, a, b, m);
            }
            if (mode != REDUCE) {
                multiply(a, m, factor);
            }
            d.put(di + base, a, 0, m);
        }
    }

    static void float64(ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                        int count, int mode, double factor) {
        DoubleBuffer d = JavaKernels.doubles(dst, dstOffset, count, 0);
        DoubleBuffer s = mode == SCALE ? null : JavaKernels.doubles(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 8);
        int si = JavaKernels.firstIndex(srcOffset, 8);
        Scratch scratch = Scratch.get();
        double[] a = scratch.doublesA();
        double[] b = scratch.doublesB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            d.get(di + base, a, 0, m);
            if (mode != SCALE) {
                s.get(si + base, b, 0, m);
                combine(op, a, b, m);
            }
            if (mode != REDUCE) {
                for (int i = 0; i < m; i++) {
                    a[i] = a[i] * factor;
                }
            }
            d.put(di + base, a, 0, m);
        }
    }

    /** {@code a[i] = op(a[i], b[i])}; one plain loop per op so C2 vectorises each. */
    static void combine(ReductionOp op, float[] a, float[] b, int m) {
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

    static void multiply(float[] a, int m, float factor) {
        for (int i = 0; i < m; i++) {
            a[i] = a[i] * factor;
        }
    }

    private static void combine(ReductionOp op, double[] a, double[] b, int m) {
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
