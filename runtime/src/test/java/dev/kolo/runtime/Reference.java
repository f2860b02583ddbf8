package dev.kolo.runtime;

import java.util.List;
import java.util.Random;

/** Inputs and the simple sequential reference (double precision, or exact integer arithmetic) for collectives. */
final class Reference {
    private Reference() {
    }

    /** Values every dtype holds exactly, so that any reduction order gives the same float result. */
    static Tensor input(DType dtype, long count, long seed, ReduceOp op) {
        Random r = new Random(seed);
        float[] v = new float[(int) count];
        for (int i = 0; i < v.length; i++) {
            switch (dtype) {
                case INT8:
                case UINT8:
                    v[i] = op == ReduceOp.PRODUCT ? r.nextInt(3) : r.nextInt(200) - (dtype == DType.INT8 ? 100 : 0);
                    break;
                default:
                    v[i] = op == ReduceOp.PRODUCT ? (r.nextInt(5) - 2) * 0.5f : (r.nextInt(2001) - 1000) / 8f;
            }
            if (dtype == DType.UINT8 && v[i] < 0) {
                v[i] = -v[i];
            }
            if (!dtype.isFloatingPoint()) {
                v[i] = (float) Math.floor(v[i]);
            }
        }
        return Tensor.of(dtype, v, count);
    }

    /** Sequential reduction of every rank's input, then the contract's scaling. */
    static double[] reduce(List<Tensor> inputs, DType dtype, ReduceOp op, double prescale, double postscale) {
        int n = inputs.size();
        int count = (int) inputs.get(0).numElements();
        double[][] values = new double[n][];
        for (int r = 0; r < n; r++) {
            values[r] = inputs.get(r).toDoubleArray();
        }
        double[] out = new double[count];
        for (int i = 0; i < count; i++) {
            double acc = 0;
            long iacc = 0;
            for (int r = 0; r < n; r++) {
                double x = values[r][i];
                if (!dtype.isFloatingPoint()) {
                    long xi = saturate(dtype, x * prescale);
                    iacc = r == 0 ? xi : wrap(dtype, combine(op, iacc, xi));
                } else {
                    double xs = x * prescale;
                    acc = r == 0 ? xs : combine(op, acc, xs);
                }
            }
            double post = op == ReduceOp.AVERAGE ? postscale / n : postscale;
            out[i] = dtype.isFloatingPoint() ? acc * post : saturate(dtype, iacc * post);
        }
        return out;
    }

    private static double combine(ReduceOp op, double a, double b) {
        switch (op) {
            case SUM: case AVERAGE: return a + b;
            case MIN: return Math.min(a, b);
            case MAX: return Math.max(a, b);
            case PRODUCT: return a * b;
            default: throw new AssertionError(op);
        }
    }

    private static long combine(ReduceOp op, long a, long b) {
        switch (op) {
            case SUM: case AVERAGE: return a + b;
            case MIN: return Math.min(a, b);
            case MAX: return Math.max(a, b);
            case PRODUCT: return a * b;
            default: throw new AssertionError(op);
        }
    }

    /** Scaling rule of the contract: in double, truncated toward zero, saturated at the type's range. */
    static long saturate(DType dtype, double v) {
        double t = v < 0 ? Math.ceil(v) : Math.floor(v);
        switch (dtype) {
            case INT8: return (long) Math.max(-128, Math.min(127, t));
            case UINT8: return (long) Math.max(0, Math.min(255, t));
            case INT32: return (long) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, t));
            default: return (long) t;
        }
    }

    /** Sum of magnitudes each element's result is built from: rounding error scales with it, not the result. */
    static double[] magnitude(List<Tensor> inputs, ReduceOp op, double prescale, double postscale) {
        int n = inputs.size();
        int count = (int) inputs.get(0).numElements();
        double post = Math.abs(op == ReduceOp.AVERAGE ? postscale / n : postscale);
        double[] out = new double[count];
        for (Tensor t : inputs) {
            double[] v = t.toDoubleArray();
            for (int i = 0; i < count; i++) {
                out[i] += Math.abs(v[i] * prescale) * post;
            }
        }
        return out;
    }

    static long wrap(DType dtype, long v) {
        switch (dtype) {
            case INT8: return (byte) v;
            case UINT8: return v & 0xFF;
            case INT32: return (int) v;
            default: return v;
        }
    }

    /**
     * Tolerance against the double reference: each of the ring's n - 1 reduction steps and two scalings
     * may round once (half types round every partial sum), relative to the magnitude involved.
     */
    static double tolerance(DType dtype, double magnitude, int ranks) {
        double eps;
        switch (dtype) {
            case FLOAT16: eps = 0x1p-11; break;
            case BFLOAT16: eps = 0x1p-8; break;
            case FLOAT32: eps = 0x1p-24; break;
            case FLOAT64: eps = 0x1p-53; break;
            default: return 0;
        }
        return eps * (ranks + 2) * magnitude + 1e-30;
    }
}
