package dev.kolo.kernels;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/** Test helper: raw element access as long bits, and random data salted with special values. */
final class Elements {

    private Elements() {
    }

    static ByteBuffer allocate(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    static long get(ElementType t, ByteBuffer b, int byteOffset, int i) {
        switch (t.byteSize()) {
            case 1: return b.get(byteOffset + i);
            case 2: return b.getShort(byteOffset + 2 * i);
            case 4: return b.getInt(byteOffset + 4 * i);
            default: return b.getLong(byteOffset + 8 * i);
        }
    }

    static void put(ElementType t, ByteBuffer b, int byteOffset, int i, long bits) {
        switch (t.byteSize()) {
            case 1: b.put(byteOffset + i, (byte) bits); break;
            case 2: b.putShort(byteOffset + 2 * i, (short) bits); break;
            case 4: b.putInt(byteOffset + 4 * i, (int) bits); break;
            default: b.putLong(byteOffset + 8 * i, bits); break;
        }
    }

    private static final float[] F32 = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f, 0.0f,
        Float.MIN_VALUE, -Float.MIN_NORMAL / 3, Float.MAX_VALUE, -Float.MAX_VALUE, 1e-40f};
    private static final double[] F64 = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0,
        Double.MIN_VALUE, -Double.MIN_NORMAL / 3, Double.MAX_VALUE, -Double.MAX_VALUE};
    private static final short[] F16 = {0x7E00, 0x7C00, (short) 0xFC00, (short) 0x8000, 0x0000, 0x0001, (short) 0x83FF,
        0x7BFF, (short) 0xFBFF, 0x7C01};
    private static final short[] BF16 = {0x7FC0, 0x7F80, (short) 0xFF80, (short) 0x8000, 0x0000, 0x0001, (short) 0x807F,
        0x7F7F, (short) 0xFF7F, 0x7F81};
    private static final long[] I8 = {0, -1, 127, -128, 255, 1};
    private static final long[] I32 = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 1};
    private static final long[] I64 = {0, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1};

    /** Mostly ordinary values, about one in eight special (NaN, infinities, -0.0, subnormal, extremes). */
    static long random(ElementType t, SplittableRandom rnd) {
        boolean special = rnd.nextInt(8) == 0;
        switch (t) {
            case FLOAT32: {
                float v = special ? F32[rnd.nextInt(F32.length)] : (float) ((rnd.nextDouble() - 0.5) * Math.scalb(1.0, rnd.nextInt(-20, 21)));
                return Float.floatToRawIntBits(v);
            }
            case FLOAT64: {
                double v = special ? F64[rnd.nextInt(F64.length)] : (rnd.nextDouble() - 0.5) * Math.scalb(1.0, rnd.nextInt(-40, 41));
                return Double.doubleToRawLongBits(v);
            }
            case FLOAT16: {
                return special ? F16[rnd.nextInt(F16.length)] : HalfFloats.floatToHalf((float) ((rnd.nextDouble() - 0.5) * Math.scalb(1.0, rnd.nextInt(-14, 12))));
            }
            case BFLOAT16: {
                return special ? BF16[rnd.nextInt(BF16.length)] : HalfFloats.floatToBfloat16((float) ((rnd.nextDouble() - 0.5) * Math.scalb(1.0, rnd.nextInt(-40, 41))));
            }
            case INT8:
            case UINT8: {
                return special ? I8[rnd.nextInt(I8.length)] : rnd.nextInt(256);
            }
            case INT32: {
                return special ? I32[rnd.nextInt(I32.length)] : rnd.nextInt();
            }
            default: {
                return special ? I64[rnd.nextInt(I64.length)] : rnd.nextLong();
            }
        }
    }

    static void fillRandom(ElementType t, ByteBuffer b, int byteOffset, int count, SplittableRandom rnd) {
        for (int i = 0; i < count; i++) {
            put(t, b, byteOffset, i, random(t, rnd));
        }
    }

    /** Equal bits, or both NaN (NaN payloads are not specified). */
    static boolean same(ElementType t, long expected, long actual) {
        switch (t) {
            case FLOAT32:
                return Float.floatToIntBits(Float.intBitsToFloat((int) expected)) == Float.floatToIntBits(Float.intBitsToFloat((int) actual));
            case FLOAT64:
                return Double.doubleToLongBits(Double.longBitsToDouble(expected)) == Double.doubleToLongBits(Double.longBitsToDouble(actual));
            case FLOAT16:
                return (short) expected == (short) actual || (isNaN16(expected) && isNaN16(actual));
            case BFLOAT16:
                return (short) expected == (short) actual || (isNaNbf16(expected) && isNaNbf16(actual));
            case INT8:
            case UINT8:
                return (byte) expected == (byte) actual;
            case INT32:
                return (int) expected == (int) actual;
            default:
                return expected == actual;
        }
    }

    private static boolean isNaN16(long h) {
        return (h & 0x7FFF) > 0x7C00;
    }

    private static boolean isNaNbf16(long h) {
        return (h & 0x7FFF) > 0x7F80;
    }
}
