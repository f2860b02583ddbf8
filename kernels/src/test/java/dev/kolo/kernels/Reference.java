package dev.kolo.kernels;

/**
 * The documented semantics, one element at a time, written the plain way: floating point in
 * double then rounded once to the type (exact for float32 add/multiply, whose double results
 * round to the same float), integers in long arithmetic then wrapped by a cast.
 */
final class Reference {

    private Reference() {
    }

    static long reduce(ElementType t, ReductionOp op, long a, long b) {
        switch (t) {
            case FLOAT32:
                return Float.floatToRawIntBits((float) op(op, f32(a), f32(b)));
            case FLOAT64:
                return Double.doubleToRawLongBits(op(op, Double.longBitsToDouble(a), Double.longBitsToDouble(b)));
            case FLOAT16:
                return HalfFloats.floatToHalf((float) op(op, f16(a), f16(b)));
            case BFLOAT16:
                return HalfFloats.floatToBfloat16((float) op(op, bf16(a), bf16(b)));
            case INT8:
                return (byte) op(op, (byte) a, (byte) b);
            case UINT8:
                return (byte) op(op, a & 0xFF, b & 0xFF);
            case INT32:
                return (int) op(op, (int) a, (int) b);
            default:
                return op(op, a, b);
        }
    }

    static long scale(ElementType t, long a, double factor) {
        float ff = (float) factor;
        switch (t) {
            case FLOAT32:
                return Float.floatToRawIntBits((float) (f32(a) * (double) ff));
            case FLOAT64:
                return Double.doubleToRawLongBits(Double.longBitsToDouble(a) * factor);
            case FLOAT16:
                return HalfFloats.floatToHalf((float) (f16(a) * (double) ff));
            case BFLOAT16:
                return HalfFloats.floatToBfloat16((float) (bf16(a) * (double) ff));
            case INT8:
                return saturate((byte) a * factor, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case UINT8:
                return saturate((a & 0xFF) * factor, 0, 255);
            case INT32:
                return saturate((int) a * factor, Integer.MIN_VALUE, Integer.MAX_VALUE);
            default:
                return saturate((double) a * factor, Long.MIN_VALUE, Long.MAX_VALUE);
        }
    }

    /** op then scale, rounding half types once at the end. */
    static long reduceAndScale(ElementType t, ReductionOp op, long a, long b, double factor) {
        float ff = (float) factor;
        switch (t) {
            case FLOAT16:
                return HalfFloats.floatToHalf((float) ((float) op(op, f16(a), f16(b)) * (double) ff));
            case BFLOAT16:
                return HalfFloats.floatToBfloat16((float) ((float) op(op, bf16(a), bf16(b)) * (double) ff));
            default:
                return scale(t, reduce(t, op, a, b), factor);
        }
    }

    private static double op(ReductionOp op, double x, double y) {
        switch (op) {
            case SUM: return x + y;
            case PRODUCT: return x * y;
            case MIN: return Math.min(x, y);
            default: return Math.max(x, y);
        }
    }

    private static long op(ReductionOp op, long x, long y) {
        switch (op) {
            case SUM: return x + y;
            case PRODUCT: return x * y;
            case MIN: return Math.min(x, y);
            default: return Math.max(x, y);
        }
    }

    /** Truncate toward zero, clamp to [lo, hi], NaN to 0. */
    private static long saturate(double r, long lo, long hi) {
        if (Double.isNaN(r)) {
            return 0;
        }
        double t = r < 0 ? Math.ceil(r) : Math.floor(r);
        if (t <= lo) {
            return lo;
        }
        if (t >= hi) { // for int64, hi as a double is 2^63
            return hi;
        }
        return (long) t;
    }

    private static float f32(long bits) {
        return Float.intBitsToFloat((int) bits);
    }

    private static float f16(long bits) {
        return HalfFloats.halfToFloat((short) bits);
    }

    private static float bf16(long bits) {
        return HalfFloats.bfloat16ToFloat((short) bits);
    }
}
