package dev.kolo.runtime;

import dev.kolo.kernels.ReductionOp;
import java.util.List;

/**
 * Inputs and the simple sequential reference (double precision, or exact integer arithmetic) for collectives: the
 * kernels' shared test reference ({@link dev.kolo.kernels.testing.Reference}) for tensors, DTypes and ReduceOps.
 */
final class Reference {
    private Reference() {
    }

    /** Values every dtype holds exactly, so that any reduction order gives the same float result. */
    static Tensor input(DType dtype, long count, long seed, ReduceOp op) {
        return Tensor.of(dtype, dev.kolo.kernels.testing.Reference.exactValues(dtype.elementType(), (int) count, seed,
                op == ReduceOp.PRODUCT), count);
    }

    /** Sequential reduction of every rank's input, then the contract's scaling (AVERAGE: a sum, scaled by 1/n). */
    static double[] reduce(List<Tensor> inputs, DType dtype, ReduceOp op, double prescale, double postscale) {
        return dev.kolo.kernels.testing.Reference.sequential(dtype.elementType(), reduction(op), values(inputs),
                prescale, post(op, postscale, inputs.size()));
    }

    /** Sum of magnitudes each element's result is built from: rounding error scales with it, not the result. */
    static double[] magnitude(List<Tensor> inputs, ReduceOp op, double prescale, double postscale) {
        return dev.kolo.kernels.testing.Reference.magnitude(values(inputs), prescale,
                post(op, postscale, inputs.size()));
    }

    /**
     * Tolerance against the double reference: each of the ring's n - 1 reduction steps and two scalings
     * may round once (half types round every partial sum), relative to the magnitude involved.
     */
    static double tolerance(DType dtype, double magnitude, int ranks) {
        return dev.kolo.kernels.testing.Reference.tolerance(dtype.elementType(), magnitude, ranks);
    }

    /** The element-wise ops, which this reference computes; Adasum has its own. */
    static final List<ReduceOp> ELEMENT_WISE = java.util.Arrays.stream(ReduceOp.values())
            .filter(op -> op != ReduceOp.ADASUM).toList();

    private static ReductionOp reduction(ReduceOp op) {
        return switch (op) {
            case SUM, AVERAGE -> ReductionOp.SUM;
            case MIN -> ReductionOp.MIN;
            case MAX -> ReductionOp.MAX;
            case PRODUCT -> ReductionOp.PRODUCT;
            case ADASUM -> throw new IllegalArgumentException("Adasum is not element-wise: see AdasumAllreduceTest");
        };
    }

    private static double post(ReduceOp op, double postscale, int ranks) {
        return op == ReduceOp.AVERAGE ? postscale / ranks : postscale;
    }

    private static double[][] values(List<Tensor> inputs) {
        double[][] values = new double[inputs.size()][];
        for (int r = 0; r < values.length; r++) {
            values[r] = inputs.get(r).toDoubleArray();
        }
        return values;
    }
}
