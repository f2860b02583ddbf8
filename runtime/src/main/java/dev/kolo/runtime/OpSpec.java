package dev.kolo.runtime;

import java.util.Arrays;
import java.util.Objects;

/**
 * What one rank asks for: a named collective and every attribute the ranks must agree on. Two ranks'
 * specs for the same name must be equal except dim 0 for allgather and alltoall (and the splits of
 * alltoall, which are each rank's own).
 */
final class OpSpec {
    final String name;
    final OpType type;
    final DType dtype;
    final long[] shape;
    final ReduceOp reduceOp;
    final double prescale;
    final double postscale;
    final int root;
    final long[] splits;

    OpSpec(String name, OpType type, DType dtype, long[] shape, ReduceOp reduceOp, double prescale,
           double postscale, int root, long[] splits) {
        this.name = Objects.requireNonNull(name);
        this.type = Objects.requireNonNull(type);
        this.dtype = Objects.requireNonNull(dtype);
        this.shape = shape.clone();
        this.reduceOp = Objects.requireNonNull(reduceOp);
        this.prescale = prescale;
        this.postscale = postscale;
        this.root = root;
        this.splits = splits == null ? new long[0] : splits.clone();
    }

    long numElements() {
        return Tensor.elementCount(shape);
    }

    long byteSize() {
        return numElements() * dtype.byteSize();
    }

    /** Elements per row of dim 0 (1 for a vector, 0 if a later dim is 0). */
    long rowElements() {
        long n = 1;
        for (int i = 1; i < shape.length; i++) {
            n *= shape[i];
        }
        return n;
    }

    long rows() {
        return shape.length == 0 ? 1 : shape[0];
    }

    /** The response cache may skip metadata only for ops whose spec is the same on every rank. */
    boolean cacheable() {
        return type != OpType.ALLTOALL;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof OpSpec s)) {
            return false;
        }
        return name.equals(s.name) && type == s.type && dtype == s.dtype && Arrays.equals(shape, s.shape)
                && reduceOp == s.reduceOp && Double.compare(prescale, s.prescale) == 0
                && Double.compare(postscale, s.postscale) == 0 && root == s.root && Arrays.equals(splits, s.splits);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, type, dtype, Arrays.hashCode(shape), reduceOp, prescale, postscale, root,
                Arrays.hashCode(splits));
    }

    @Override
    public String toString() {
        return type.label() + " '" + name + "' " + dtype + Arrays.toString(shape);
    }
}
