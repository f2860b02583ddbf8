package dev.kolo.runtime.internal.control;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.Arrays;
import java.util.Objects;

/**
 * What one rank asks for: a named collective and every attribute the ranks must agree on. Two ranks'
 * specs for the same name must be equal except dim 0 for allgather and alltoall (and the splits of
 * alltoall, which are each rank's own).
 */
public final class OpSpec {
    public final String name;
    public final OpType type;
    public final DType dtype;
    public final long[] shape;
    public final ReduceOp reduceOp;
    public final double prescale;
    public final double postscale;
    public final int root;
    public final long[] splits;
    /**
     * Tensors in this op's group (0: not grouped). Members are named {@code group/0 .. group/(n-1)}; the
     * coordinator releases a group only when every member is ready on every rank, so it runs (and fuses)
     * as one.
     */
    public final int groupSize;
    /** Computed once: the engine looks specs up by value on every cached op, which must not allocate. */
    private final int hash;
    /**
     * The element count, computed once (the engine asks for it several times per op), or -1 when the shape's
     * product overflows. A negative value is recomputed when asked, so a spec decoded from a bad message fails (or
     * reports a negative count) only where it did before this was cached.
     */
    private final long elements;

    public OpSpec(String name, OpType type, DType dtype, long[] shape, ReduceOp reduceOp, double prescale,
           double postscale, int root, long[] splits) {
        this(name, type, dtype, shape, reduceOp, prescale, postscale, root, splits, 0);
    }

    public OpSpec(String name, OpType type, DType dtype, long[] shape, ReduceOp reduceOp, double prescale,
           double postscale, int root, long[] splits, int groupSize) {
        this.name = Objects.requireNonNull(name);
        this.type = Objects.requireNonNull(type);
        this.dtype = Objects.requireNonNull(dtype);
        this.shape = shape.clone();
        this.reduceOp = Objects.requireNonNull(reduceOp);
        this.prescale = prescale;
        this.postscale = postscale;
        this.root = root;
        this.splits = splits == null ? new long[0] : splits.clone();
        if (groupSize < 0 || groupSize == 1 || groupSize > MAX_GROUP) {
            throw new IllegalArgumentException("group size " + groupSize + " of '" + name + "' must be 0 or 2.."
                    + MAX_GROUP);
        }
        if (groupSize > 1) {
            int index = groupIndex(name);
            if (index < 0 || index >= groupSize) {
                throw new IllegalArgumentException("group member '" + name + "' must be named <group>/<index> with "
                        + "index below the group size " + groupSize);
            }
        }
        this.groupSize = groupSize;
        int h = name.hashCode();
        h = 31 * h + type.hashCode();
        h = 31 * h + dtype.hashCode();
        h = 31 * h + Arrays.hashCode(this.shape);
        h = 31 * h + reduceOp.hashCode();
        h = 31 * h + Double.hashCode(prescale);
        h = 31 * h + Double.hashCode(postscale);
        h = 31 * h + root;
        h = 31 * h + Arrays.hashCode(this.splits);
        this.hash = 31 * h + groupSize;
        this.elements = elementsOrMinusOne(this.shape);
    }

    private static long elementsOrMinusOne(long[] shape) {
        try {
            return Tensor.elementCount(shape);
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    /**
     * @return whether this spec is exactly the allreduce of these attributes (not grouped), so a caller may
     *         submit it again instead of a new one; {@code shape} is the tensor's own, only read
     */
    public boolean isAllreduce(String name, DType dtype, ReduceOp op, double prescale, double postscale) {
        return type == OpType.ALLREDUCE && groupSize == 0 && root == 0 && splits.length == 0 && dtype == this.dtype
                && op == reduceOp && Double.compare(prescale, this.prescale) == 0
                && Double.compare(postscale, this.postscale) == 0 && name.equals(this.name);
    }

    /** Most tensors one grouped op may hold. */
    public static final int MAX_GROUP = 65535;

    /** The member index of a name {@code group/i}, or -1. */
    public static int groupIndex(String name) {
        int slash = name.lastIndexOf('/');
        if (slash <= 0 || slash == name.length() - 1 || name.length() - slash > 6) {
            return -1;
        }
        int index = 0;
        for (int i = slash + 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            index = index * 10 + (c - '0');
        }
        return index;
    }

    /** The group's name: this member's name without its {@code /index}. */
    public String groupName() {
        return name.substring(0, name.lastIndexOf('/'));
    }

    public long numElements() {
        return elements >= 0 ? elements : Tensor.elementCount(shape);
    }

    public long byteSize() {
        return numElements() * dtype.byteSize();
    }

    /** Elements per row of dim 0 (1 for a vector, 0 if a later dim is 0). */
    public long rowElements() {
        long n = 1;
        for (int i = 1; i < shape.length; i++) {
            n *= shape[i];
        }
        return n;
    }

    public long rows() {
        return shape.length == 0 ? 1 : shape[0];
    }

    /** The response cache may skip metadata only for ops whose spec is the same on every rank. */
    public boolean cacheable() {
        return type != OpType.ALLTOALL;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof OpSpec s)) {
            return false;
        }
        return name.equals(s.name) && type == s.type && dtype == s.dtype && Arrays.equals(shape, s.shape)
                && reduceOp == s.reduceOp && Double.compare(prescale, s.prescale) == 0
                && Double.compare(postscale, s.postscale) == 0 && root == s.root && Arrays.equals(splits, s.splits)
                && groupSize == s.groupSize;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return type.label() + " '" + name + "' " + dtype + Arrays.toString(shape);
    }
}
