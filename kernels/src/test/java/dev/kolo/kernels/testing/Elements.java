package dev.kolo.kernels.testing;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * Test helper, shared through the kernels' tests jar: element access per {@link ElementType} as raw long bits (at
 * a byte offset) or as values (double, or the exact long of an integer type), the integer types' wrap and
 * saturation rules, and random data salted with special values. The runtime's tests reach it through
 * {@code DType.elementType()}.
 */
public final class Elements {

    private Elements() {
    }

    /** A direct buffer in native order. */
    public static ByteBuffer allocate(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    /** A direct little-endian buffer (the wire's order) of at least one byte. */
    public static ByteBuffer direct(int bytes) {
        return ByteBuffer.allocateDirect(Math.max(bytes, 1)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A copy of {@code length} bytes of {@code b} from {@code offset}. */
    public static byte[] bytes(ByteBuffer b, int offset, int length) {
        byte[] out = new byte[length];
        b.get(offset, out, 0, length);
        return out;
    }

    /** Raw bits of element {@code i} after {@code byteOffset}, sign-extended. */
    public static long get(ElementType t, ByteBuffer b, int byteOffset, int i) {
        switch (t.byteSize()) {
            case 1: return b.get(byteOffset + i);
            case 2: return b.getShort(byteOffset + 2 * i);
            case 4: return b.getInt(byteOffset + 4 * i);
            default: return b.getLong(byteOffset + 8 * i);
        }
    }

    /** Stores the low bits of {@code bits} as element {@code i} after {@code byteOffset}. */
    public static void put(ElementType t, ByteBuffer b, int byteOffset, int i, long bits) {
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
    public static long random(ElementType t, SplittableRandom rnd) {
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

    public static void fillRandom(ElementType t, ByteBuffer b, int byteOffset, int count, SplittableRandom rnd) {
        for (int i = 0; i < count; i++) {
            put(t, b, byteOffset, i, random(t, rnd));
        }
    }

    /** Equal bits, or both NaN (NaN payloads are not specified). */
    public static boolean same(ElementType t, long expected, long actual) {
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

    /** Stores {@code v} as element {@code i}, rounded to a floating-point type or cast to an integer type. */
    public static void putValue(ElementType t, ByteBuffer b, int i, double v) {
        int o = i * t.byteSize();
        switch (t) {
            case FLOAT32 -> b.putFloat(o, (float) v);
            case FLOAT64 -> b.putDouble(o, v);
            case FLOAT16 -> b.putShort(o, HalfFloats.floatToHalf((float) v));
            case BFLOAT16 -> b.putShort(o, HalfFloats.floatToBfloat16((float) v));
            case INT8, UINT8 -> b.put(o, (byte) (long) v);
            case INT32 -> b.putInt(o, (int) (long) v);
            case INT64 -> b.putLong(o, (long) v);
            default -> throw new IllegalArgumentException();
        }
    }

    /** Integer types: the exact value of element {@code i} (UINT8 as 0..255). */
    public static long getInteger(ElementType t, ByteBuffer b, int i) {
        int o = i * t.byteSize();
        return switch (t) {
            case INT8 -> b.get(o);
            case UINT8 -> b.get(o) & 0xFF;
            case INT32 -> b.getInt(o);
            case INT64 -> b.getLong(o);
            default -> throw new IllegalArgumentException();
        };
    }

    /** The value of element {@code i} as a double. */
    public static double getValue(ElementType t, ByteBuffer b, int i) {
        int o = i * t.byteSize();
        return switch (t) {
            case FLOAT32 -> b.getFloat(o);
            case FLOAT64 -> b.getDouble(o);
            case FLOAT16 -> HalfFloats.halfToFloat(b.getShort(o));
            case BFLOAT16 -> HalfFloats.bfloat16ToFloat(b.getShort(o));
            default -> getInteger(t, b, i);
        };
    }

    /** Wraps a long to the width of an integer type (UINT8 to 0..255). */
    public static long wrap(ElementType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT32 -> (int) v;
            default -> v;
        };
    }

    /**
     * The integer types' scaling rule: a double truncated toward zero and saturated at the type's range (UINT8 to
     * 0..255), NaN to 0.
     */
    public static long saturate(ElementType t, double v) {
        if (Double.isNaN(v)) {
            return 0;
        }
        double r = v < 0 ? Math.ceil(v) : Math.floor(v);
        long lo;
        long hi;
        switch (t) {
            case INT8 -> {
                lo = Byte.MIN_VALUE;
                hi = Byte.MAX_VALUE;
            }
            case UINT8 -> {
                lo = 0;
                hi = 255;
            }
            case INT32 -> {
                lo = Integer.MIN_VALUE;
                hi = Integer.MAX_VALUE;
            }
            default -> {
                lo = Long.MIN_VALUE;
                hi = Long.MAX_VALUE;
            }
        }
        if (r <= lo) {
            return lo;
        }
        if (r >= hi) { // for int64, hi as a double is 2^63
            return hi;
        }
        return (long) r;
    }
}
