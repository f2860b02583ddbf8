package dev.kolo.runtime;

/** Element-wise reduction applied by allreduce and reducescatter. */
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
    PRODUCT
}
