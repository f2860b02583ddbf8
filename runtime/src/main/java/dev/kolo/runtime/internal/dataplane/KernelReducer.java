package dev.kolo.runtime.internal.dataplane;

import dev.kolo.kernels.Kernels;
import dev.kolo.kernels.ReductionOp;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.ring.Reducer;
import java.nio.ByteBuffer;

/** The ring's element-wise arithmetic, done by the kernels (native SIMD when available). */
public final class KernelReducer implements Reducer {
    private final Kernels kernels;

    public KernelReducer(Kernels kernels) {
        this.kernels = kernels;
    }

    @Override
    public void reduce(DType dtype, ReduceOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                       int count) {
        kernels.reduce(Scaling.elementType(dtype), reduction(op), dst, dstOffset, src, srcOffset, count);
    }

    @Override
    public void scale(DType dtype, ByteBuffer buf, int offset, int count, double factor) {
        kernels.scale(Scaling.elementType(dtype), buf, offset, count, factor);
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
}
