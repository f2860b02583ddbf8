package dev.kolo.kernels;

import static dev.kolo.kernels.JavaKernels.REDUCE;
import static dev.kolo.kernels.JavaKernels.SCALE;
import static dev.kolo.kernels.Scratch.CHUNK;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;

/** Java loops for float16/bfloat16: widen a chunk to float, compute, round once; and conversion. */
final class JavaHalfLoops {

    private JavaHalfLoops() {
    }

    static void reduce(ElementType type, ReductionOp op, ByteBuffer dst, int dstOffset, ByteBuffer src,
                       int srcOffset, int count, int mode, float factor) {
        ShortBuffer d = JavaKernels.shorts(dst, dstOffset, count, 0);
        ShortBuffer s = mode == SCALE ? null : JavaKernels.shorts(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 2);
        int si = JavaKernels.firstIndex(srcOffset, 2);
        Scratch scratch = Scratch.get();
        short[] ha = scratch.shortsA();
        short[] hb = scratch.shortsB();
        float[] a = scratch.floatsA();
        float[] b = scratch.floatsB();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            d.get(di + base, ha, 0, m);
            widen(type, ha, a, m);
            if (mode != SCALE) {
                s.get(si + base, hb, 0, m);
                widen(type, hb, b, m);
                JavaFloatLoops.combine(op, a, b, m);
            }
            if (mode != REDUCE) {
                JavaFloatLoops.multiply(a, m, factor);
            }
            narrow(type, a, ha, m);
            d.put(di + base, ha, 0, m);
        }
    }

    /** float32 to float16/bfloat16. */
    static void narrow(ElementType dstType, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        ShortBuffer d = JavaKernels.shorts(dst, dstOffset, count, 0);
        FloatBuffer s = JavaKernels.floats(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 2);
        int si = JavaKernels.firstIndex(srcOffset, 4);
        Scratch scratch = Scratch.get();
        short[] h = scratch.shortsA();
        float[] f = scratch.floatsA();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            s.get(si + base, f, 0, m);
            narrow(dstType, f, h, m);
            d.put(di + base, h, 0, m);
        }
    }

    /** float16/bfloat16 to float32. */
    static void widen(ElementType srcType, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        FloatBuffer d = JavaKernels.floats(dst, dstOffset, count, 0);
        ShortBuffer s = JavaKernels.shorts(src, srcOffset, count, 1);
        int di = JavaKernels.firstIndex(dstOffset, 4);
        int si = JavaKernels.firstIndex(srcOffset, 2);
        Scratch scratch = Scratch.get();
        short[] h = scratch.shortsA();
        float[] f = scratch.floatsA();
        for (int base = 0; base < count; base += CHUNK) {
            int m = Math.min(CHUNK, count - base);
            s.get(si + base, h, 0, m);
            widen(srcType, h, f, m);
            d.put(di + base, f, 0, m);
        }
    }

    private static void widen(ElementType type, short[] h, float[] out, int m) {
        if (type == ElementType.BFLOAT16) {
            for (int i = 0; i < m; i++) {
                out[i] = Float.intBitsToFloat(h[i] << 16);
            }
        } else {
            float[] table = HalfFloats.halfToFloatTable();
            for (int i = 0; i < m; i++) {
                out[i] = table[h[i] & 0xFFFF];
            }
        }
    }

    private static void narrow(ElementType type, float[] in, short[] h, int m) {
        if (type == ElementType.BFLOAT16) {
            for (int i = 0; i < m; i++) {
                h[i] = HalfFloats.floatToBfloat16(in[i]);
            }
        } else {
            for (int i = 0; i < m; i++) {
                h[i] = HalfFloats.floatToHalf(in[i]);
            }
        }
    }
}
