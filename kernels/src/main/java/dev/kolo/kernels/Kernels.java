package dev.kolo.kernels;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * Element-wise kernels used by the collectives: reduce, scale, reduce-then-scale and
 * half-precision conversion, over <em>direct</em> {@link ByteBuffer}s.
 *
 * <p>Offsets are absolute byte offsets from the start of the buffer (position and limit are
 * ignored except that a range must end at or before the limit; neither is changed). Elements
 * are in native byte order and may start at any byte offset. {@code dst} and {@code src} may be
 * the same range; partially overlapping ranges give undefined results. Implementations are
 * thread-safe and stateless, so any number of threads may call them on disjoint ranges.
 *
 * <p>Rounding: float32/float64 operate in their own precision; float16 and bfloat16 are widened
 * to float, computed, and rounded once per element to nearest-even. Integer SUM and PRODUCT
 * wrap around. Scaling multiplies float32 and the half types by {@code (float) factor}, float64
 * by {@code factor}, and integers in double, truncating toward zero and saturating at the
 * type's range (NaN becomes 0). For MIN and MAX semantics see {@link ReductionOp}.
 *
 * <p>Obtain the process-wide instance with {@link #get()}.
 */
public interface Kernels {

    /** {@code "native"} or {@code "java"}; stable, used as a metric label. */
    String name();

    /**
     * {@code dst[i] = op(dst[i], src[i])} for {@code count} elements.
     *
     * @throws IllegalArgumentException if a buffer is not direct or a count is negative
     * @throws IndexOutOfBoundsException if a range does not fit below the buffer's limit
     * @throws java.nio.ReadOnlyBufferException if {@code dst} is read-only
     */
    void reduce(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                ByteBuffer src, long srcByteOffset, long count);

    /**
     * {@code dst[i] = op(dst[i], src[i]) * factor} in one pass (the last step of a ring
     * all-reduce that averages); half types are rounded once, after the multiplication.
     */
    void reduceAndScale(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                        ByteBuffer src, long srcByteOffset, long count, double factor);

    /** {@code buf[i] = buf[i] * factor}. */
    void scale(ElementType type, ByteBuffer buf, long byteOffset, long count, double factor);

    /**
     * {@code dst[i] = convert(src[i])}: FLOAT32 to FLOAT16/BFLOAT16 (round to nearest even, NaN
     * stays NaN, overflow becomes infinity), FLOAT16/BFLOAT16 to FLOAT32 (exact), or a copy when
     * both types are equal.
     *
     * @throws IllegalArgumentException for any other pair of types
     */
    void convert(ElementType dstType, ByteBuffer dst, long dstByteOffset,
                 ElementType srcType, ByteBuffer src, long srcByteOffset, long count);

    /**
     * Copies {@code byteCount} bytes that another core reads next, as into a shared-memory ring: the native kernels
     * store them past this core's caches (x86-64 non-temporal stores, then a store fence), so the reader fetches
     * them from memory at the same speed wherever the two cores sit; the Java kernels copy plainly. The ranges must
     * not overlap. Publish the bytes with a release store after this returns.
     *
     * @throws IllegalArgumentException if a buffer is not direct or the count is negative
     * @throws IndexOutOfBoundsException if a range does not fit below the buffer's limit
     * @throws java.nio.ReadOnlyBufferException if {@code dst} is read-only
     */
    void copyForPeer(ByteBuffer dst, long dstByteOffset, ByteBuffer src, long srcByteOffset, long byteCount);

    /**
     * The kernels this process uses: those chosen by {@link #configure}, else chosen once on first use, native
     * when its library loads, otherwise the Java fallback (logging one WARN line with the reason).
     */
    static Kernels get() {
        return KernelSelector.selected();
    }

    /**
     * Chooses the kernels this process uses from now on (a worker does so from its {@code KOLO_KERNELS} and
     * {@code KOLO_KERNELS_ISA} settings before it joins a job).
     *
     * @param mode {@code auto} or null (native if it loads), {@code native} or {@code java}
     * @param maxIsa highest instruction set of the native kernels ({@code scalar}, {@code avx2},
     *        {@code avx512}), or null for the best this CPU has
     * @return the kernels chosen
     * @throws IllegalStateException if native is asked for and its library cannot load
     * @throws IllegalArgumentException for an unknown mode or instruction set
     */
    static Kernels configure(String mode, String maxIsa) {
        return KernelSelector.configure(mode, maxIsa);
    }

    /** The pure-Java kernels, whatever {@link #get()} chose. */
    static Kernels java() {
        return JavaKernels.INSTANCE;
    }

    /**
     * The native kernels, whatever {@link #get()} chose (a benchmark compares both), or empty when their library
     * cannot load ({@link NativeKernels#unavailableCause()} says why).
     */
    static Optional<Kernels> nativeKernels() {
        return NativeKernels.isAvailable() ? Optional.of(NativeBufferKernels.INSTANCE) : Optional.empty();
    }
}
