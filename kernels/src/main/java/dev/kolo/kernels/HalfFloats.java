package dev.kolo.kernels;

/**
 * Scalar conversions between float and the 16-bit float formats, bit-identical to the native
 * kernels (and to x86 F16C): rounding to nearest even, overflow to infinity, subnormals kept,
 * NaN stays NaN (made quiet, sign and top payload bits kept).
 *
 * <p>Half values travel as the raw bits in a {@code short}.
 */
public final class HalfFloats {

    // Every float16 widened once: the Java kernels widen by table lookup instead of branching.
    private static final float[] HALF_TO_FLOAT = new float[1 << 16];

    static {
        for (int h = 0; h < HALF_TO_FLOAT.length; h++) {
            HALF_TO_FLOAT[h] = computeHalfToFloat(h);
        }
    }

    private HalfFloats() {
    }

    /** The float with the value of IEEE binary16 {@code half} (exact). */
    public static float halfToFloat(short half) {
        return HALF_TO_FLOAT[half & 0xFFFF];
    }

    /** {@code f} rounded to the nearest IEEE binary16 (ties to even). */
    public static short floatToHalf(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 16) & 0x8000;
        int a = x & 0x7FFFFFFF;
        if (a >= 0x7F800000) { // infinity or NaN
            return (short) (sign | 0x7C00 | (a > 0x7F800000 ? 0x200 | ((a >>> 13) & 0x3FF) : 0));
        }
        if (a >= 0x477FF000) { // 65520 and above round past 65504
            return (short) (sign | 0x7C00);
        }
        if (a >= 0x38800000) { // normal half: rebias the exponent, round the mantissa
            int r = a - 0x38000000;
            r += 0xFFF + ((r >>> 13) & 1);
            return (short) (sign | (r >>> 13));
        }
        if (a <= 0x33000000) { // at most 2^-25: ties to the even zero
            return (short) sign;
        }
        int e = a >>> 23;
        int m = (a & 0x7FFFFF) | 0x800000;
        int s = 126 - e; // subnormal half counts units of 2^-24
        int q = m >>> s;
        int rem = m & ((1 << s) - 1);
        int halfway = 1 << (s - 1);
        if (rem > halfway || (rem == halfway && (q & 1) != 0)) {
            q++;
        }
        return (short) (sign | q);
    }

    /** The float with the value of bfloat16 {@code bf16} (exact). */
    public static float bfloat16ToFloat(short bf16) {
        return Float.intBitsToFloat((bf16 & 0xFFFF) << 16);
    }

    /** {@code f} rounded to the nearest bfloat16 (ties to even). */
    public static short floatToBfloat16(float f) {
        int x = Float.floatToRawIntBits(f);
        int rounded = (x + 0x7FFF + ((x >>> 16) & 1)) >>> 16;
        int nan = (0x7F800000 - (x & 0x7FFFFFFF)) >> 31; // all ones for NaN; branch-free so loops vectorise
        return (short) ((rounded & ~nan) | (((x >>> 16) | 0x40) & nan));
    }

    static float[] halfToFloatTable() {
        return HALF_TO_FLOAT;
    }

    private static float computeHalfToFloat(int h) {
        int sign = (h & 0x8000) << 16;
        int e = (h >>> 10) & 0x1F;
        int m = h & 0x3FF;
        if (e == 0x1F) {
            return Float.intBitsToFloat(sign | 0x7F800000 | (m << 13) | (m != 0 ? 0x400000 : 0));
        }
        if (e != 0) {
            return Float.intBitsToFloat(sign | ((e + 112) << 23) | (m << 13));
        }
        return Float.intBitsToFloat(sign | Float.floatToRawIntBits(m * 0x1p-24f));
    }
}
