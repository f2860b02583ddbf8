package dev.kolo.runtime;

/**
 * The reduction applied by allreduce and reducescatter: element-wise, except {@link #ADASUM}, which combines
 * whole gradients (allreduce of floating-point tensors only).
 */
public enum ReduceOp {
    /** Sum of all ranks' values. */
    SUM,
    /** Sum divided by the job size; integer types scale in double precision and truncate. */
    AVERAGE,
    /** Smallest value. */
    MIN,
    /** Largest value. */
    MAX,
    /** Product of all ranks' values. */
    PRODUCT,
    /**
     * Adaptive summation of gradients (Adasum, as Horovod's {@code hvd.Adasum}): two gradients {@code a} and
     * {@code b} combine into {@code (1 - a.b / 2|a|^2) a + (1 - a.b / 2|b|^2) b}, which is their sum when they
     * are orthogonal and their mean when they are equal, so that more ranks need no new learning rate; the
     * ranks' gradients combine as a binary tree of such pairs (ranks 0 and 1, 2 and 3, ..., then those results
     * pairwise, and so on; on a size that is not a power of two, the first ranks pair up first). Each tensor
     * combines on its own (its own dot products), so tensors reduced with Adasum are never fused with others.
     * Allreduce of floating-point tensors only (float32, float64, float16, bfloat16; each combined element is
     * rounded once to the type); the prescale applies to each rank's gradient, the postscale to the result.
     */
    ADASUM
}
