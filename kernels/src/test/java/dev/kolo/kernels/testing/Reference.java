package dev.kolo.kernels.testing;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.HalfFloats;
import dev.kolo.kernels.ReductionOp;
import java.util.Random;

/**
 * The documented semantics written the plain way, shared through the kernels' tests jar. One element at a time
 * ({@link #reduce}, {@link #scale}, {@link #reduceAndScale}, on raw bits): floating point in double then rounded
 * once to the type (exact for float32 add/multiply, whose double results round to the same float), integers in
 * long arithmetic then wrapped by a cast. Whole inputs of several ranks ({@link #sequential}): the reduction in
 * rank order in double precision, or in exact integer arithmetic, as the collectives' reference.
 */
public final class Reference {

    private Reference() {
    }

    public static long reduce(ElementType t, ReductionOp op, long a, long b) {
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

    public static long scale(ElementType t, long a, double factor) {
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
                return Elements.saturate(t, (byte) a * factor);
            case UINT8:
                return Elements.saturate(t, (a & 0xFF) * factor);
            case INT32:
                return Elements.saturate(t, (int) a * factor);
            default:
                return Elements.saturate(t, (double) a * factor);
        }
    }

    /** op then scale, rounding half types once at the end. */
    public static long reduceAndScale(ElementType t, ReductionOp op, long a, long b, double factor) {
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

    /** @return {@code x op y} in double, the reference's arithmetic for the floating types */
    public static double op(ReductionOp op, double x, double y) {
        switch (op) {
            case SUM: return x + y;
            case PRODUCT: return x * y;
            case MIN: return Math.min(x, y);
            default: return Math.max(x, y);
        }
    }

    /** @return {@code x op y} in long, before wrapping to the integer type's width */
    public static long op(ReductionOp op, long x, long y) {
        switch (op) {
            case SUM: return x + y;
            case PRODUCT: return x * y;
            case MIN: return Math.min(x, y);
            default: return Math.max(x, y);
        }
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

    /**
     * Input values every type holds exactly (multiples of 1/8 in [-125, 125], integers for the integer types, small
     * ones for a product), so that any reduction order gives the same result.
     */
    public static float[] exactValues(ElementType t, int count, long seed, boolean forProduct) {
        Random r = new Random(seed);
        float[] v = new float[count];
        for (int i = 0; i < v.length; i++) {
            switch (t) {
                case INT8:
                case UINT8:
                    v[i] = forProduct ? r.nextInt(3) : r.nextInt(200) - (t == ElementType.INT8 ? 100 : 0);
                    break;
                default:
                    v[i] = forProduct ? (r.nextInt(5) - 2) * 0.5f : (r.nextInt(2001) - 1000) / 8f;
            }
            if (t == ElementType.UINT8 && v[i] < 0) {
                v[i] = -v[i];
            }
            if (!t.isFloatingPoint()) {
                v[i] = (float) Math.floor(v[i]);
            }
        }
        return v;
    }

    /**
     * Sequential reduction of every rank's values ({@code values[rank][element]}), rank by rank: each value times
     * {@code prescale}, combined in double (floating-point types) or saturated to the type and combined in long
     * arithmetic wrapped to it (integer types), the result times {@code postscale} (saturated again for integers).
     */
    public static double[] sequential(ElementType t, ReductionOp op, double[][] values, double prescale,
            double postscale) {
        int n = values.length;
        int count = values[0].length;
        double[] out = new double[count];
        for (int i = 0; i < count; i++) {
            double acc = 0;
            long iacc = 0;
            for (int r = 0; r < n; r++) {
                double x = values[r][i];
                if (!t.isFloatingPoint()) {
                    long xi = Elements.saturate(t, x * prescale);
                    iacc = r == 0 ? xi : Elements.wrap(t, op(op, iacc, xi));
                } else {
                    double xs = x * prescale;
                    acc = r == 0 ? xs : op(op, acc, xs);
                }
            }
            out[i] = t.isFloatingPoint() ? acc * postscale : Elements.saturate(t, iacc * postscale);
        }
        return out;
    }

    /**
     * Sum of the magnitudes each element's result is built from ({@code values[rank][element]}, each times
     * {@code prescale}, the sum times {@code |postscale|}): rounding error scales with it, not with the result.
     */
    public static double[] magnitude(double[][] values, double prescale, double postscale) {
        int count = values[0].length;
        double post = Math.abs(postscale);
        double[] out = new double[count];
        for (double[] v : values) {
            for (int i = 0; i < count; i++) {
                out[i] += Math.abs(v[i] * prescale) * post;
            }
        }
        return out;
    }

    /**
     * Tolerance against {@link #sequential}: each of a ring's n - 1 reduction steps and two scalings may round once
     * (half types round every partial sum), relative to the magnitude involved; 0 for the integer types.
     */
    public static double tolerance(ElementType t, double magnitude, int ranks) {
        double eps;
        switch (t) {
            case FLOAT16: eps = 0x1p-11; break;
            case BFLOAT16: eps = 0x1p-8; break;
            case FLOAT32: eps = 0x1p-24; break;
            case FLOAT64: eps = 0x1p-53; break;
            default: return 0;
        }
        return eps * (ranks + 2) * magnitude + 1e-30;
    }
}
