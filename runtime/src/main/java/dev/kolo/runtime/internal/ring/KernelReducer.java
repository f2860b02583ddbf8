package dev.kolo.runtime.internal.ring;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.Kernels;
import dev.kolo.kernels.ReductionOp;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/**
 * The ring's element-wise arithmetic, done by the kernels (native SIMD when available, else their Java
 * loops, which give the same bits); the one place where the runtime's {@code DType} and {@code ReduceOp}
 * meet the kernels' types.
 */
public final class KernelReducer implements Reducer {
    private final Kernels kernels;

    public KernelReducer(Kernels kernels) {
        this.kernels = kernels;
    }

    @Override
    public void reduce(DType dtype, ReduceOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                       int count) {
        kernels.reduce(elementType(dtype), reduction(op), dst, dstOffset, src, srcOffset, count);
    }

    @Override
    public void scale(DType dtype, ByteBuffer buf, int offset, int count, double factor) {
        kernels.scale(elementType(dtype), buf, offset, count, factor);
    }

    private static ReductionOp reduction(ReduceOp op) {
        switch (op) {
            case SUM:
            case AVERAGE: return ReductionOp.SUM; // the ring scales AVERAGE afterwards
            case MIN: return ReductionOp.MIN;
            case MAX: return ReductionOp.MAX;
            case PRODUCT: return ReductionOp.PRODUCT;
            default: throw new AssertionError(op);
        }
    }

    /** Scales elements in place; a factor of exactly 1 (no scaling asked) costs nothing. */
    public static void scaleUnlessOne(Kernels kernels, ByteBuffer buf, int offset, long count, DType dtype,
                                      double factor) {
        if (factor != 1.0 && count > 0) {
            kernels.scale(elementType(dtype), buf, offset, count, factor);
        }
    }

    /** The kernels' name of a tensor type: the same names, one to one. */
    public static ElementType elementType(DType dtype) {
        return ElementType.valueOf(dtype.name());
    }
}
