package dev.kolo.runtime.internal.collectives;

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

    /** The kernels' reduction for each {@link ReduceOp}, by ordinal: looked up per chunk without a branch. */
    private static final ReductionOp[] REDUCTIONS = reductions();

    private static ReductionOp reduction(ReduceOp op) {
        ReductionOp r = REDUCTIONS[op.ordinal()];
        if (r == null) {
            throw new IllegalArgumentException(op + " is not an element-wise reduction: only allreduce takes it");
        }
        return r;
    }

    private static ReductionOp[] reductions() {
        ReductionOp[] byOrdinal = new ReductionOp[ReduceOp.values().length];
        for (ReduceOp op : ReduceOp.values()) {
            byOrdinal[op.ordinal()] = switch (op) {
                case SUM, AVERAGE -> ReductionOp.SUM; // the ring scales AVERAGE afterwards
                case MIN -> ReductionOp.MIN;
                case MAX -> ReductionOp.MAX;
                case PRODUCT -> ReductionOp.PRODUCT;
                case ADASUM -> null; // combines whole vectors: AdasumAllreduce, never the kernels
            };
        }
        return byOrdinal;
    }


    private static ElementType elementType(DType dtype) {
        return dtype.elementType();
    }
}
