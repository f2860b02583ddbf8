package dev.kolo.runtime.internal.engine.execute;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.OpSpec;

/**
 * The scales with which a reduction runs as a sum: AVERAGE becomes SUM with its division by the ranks moved into
 * a scale. For FLOAT16 the partial sums are rounded to fp16 at every step, so n values near 65504/n already
 * overflow to infinity before a division after the sum; the division therefore comes first for the 16-bit
 * floating types (as Horovod's gradient predivide factor), which keeps every partial sum within the range of the
 * inputs. BFLOAT16 has fp32's range but is treated alike so that the two half types behave the same way.
 * Every rank computes the same scales from the same spec and size, so all ranks still end with the same bytes.
 */
public final class AverageScaling {
    private AverageScaling() {}

    /** The op the data plane runs: SUM for AVERAGE, the spec's op otherwise. */
    public static ReduceOp sumOp(OpSpec spec) {
        return spec.reduceOp == ReduceOp.AVERAGE ? ReduceOp.SUM : spec.reduceOp;
    }

    /** The scale applied to each rank's input before the reduction. */
    public static double prescale(OpSpec spec, int size) {
        return predivides(spec) ? spec.prescale / size : spec.prescale;
    }

    /** The scale applied to the reduced result. */
    public static double postscale(OpSpec spec, int size) {
        if (spec.reduceOp != ReduceOp.AVERAGE || predivides(spec)) {
            return spec.postscale;
        }
        return spec.postscale / size;
    }

    private static boolean predivides(OpSpec spec) {
        return spec.reduceOp == ReduceOp.AVERAGE
                && (spec.dtype == DType.FLOAT16 || spec.dtype == DType.BFLOAT16);
    }
}
