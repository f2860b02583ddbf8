package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;

/**
 * Element-wise kernels the ring applies to chunks in place. This is the seam for the native SIMD kernels
 * ({@code dev.kolo.kernels}): an adapter implementing this interface is plugged in through
 * {@link TransportOptions.Builder#reducer(Reducer)}; {@link KernelReducer} over the kernels' Java loops is the portable default.
 *
 * <p>Contract: offsets are absolute byte offsets (position and limit are ignored and left unchanged);
 * the ring always passes direct buffers with limit = capacity, {@link java.nio.ByteOrder#LITTLE_ENDIAN little-endian} buffers; calls
 * come from the op thread and must not allocate. Implementations must be thread-safe (rings of several
 * workers in one JVM share one instance).
 */
public interface Reducer {

    /**
     * {@code dst[i] = dst[i] op src[i]} for {@code count} elements. {@link ReduceOp#AVERAGE} reduces as
     * SUM (the ring scales afterwards). Integers wrap around; MIN and MAX propagate NaN; FLOAT16 and
     * BFLOAT16 are computed in float and rounded once to nearest even.
     */
    void reduce(DType dtype, ReduceOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count);

    /**
     * {@code buf[i] = buf[i] * factor} for {@code count} elements. FLOAT32 and FLOAT64 multiply in double
     * and round once; FLOAT16/BFLOAT16 multiply in float and round to nearest even; integers multiply
     * in double, truncate toward zero (saturating at the long range) and wrap to their width.
     */
    void scale(DType dtype, ByteBuffer buf, int offset, int count, double factor);
}
