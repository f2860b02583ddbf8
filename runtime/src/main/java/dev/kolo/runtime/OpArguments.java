package dev.kolo.runtime;

import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;

/**
 * The checks of a collective's arguments that {@link Kolo} makes before it submits the op: a bad argument
 * fails on the calling rank, before anything is sent, with a message that names the tensor.
 */
final class OpArguments {
    private OpArguments() {
    }

    /** @throws IllegalArgumentException if {@code name} is empty or too long for the control wire */
    static void requireName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("every collective needs a name that identifies it across ranks, "
                    + "e.g. the parameter's name");
        }
        if (utf8Length(name) > ControlCodec.MAX_STRING) {
            throw new IllegalArgumentException("tensor name of " + name.length() + " characters is too long (at most "
                    + ControlCodec.MAX_STRING + " bytes)");
        }
    }

    /**
     * @return the length of {@code s} in UTF-8 as {@code getBytes(UTF_8)} encodes it (an unpaired surrogate
     *         becomes one replacement byte), counted without encoding it: every collective call checks its name
     */
    static int utf8Length(String s) {
        int n = s.length();
        int bytes = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                bytes += 1;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /**
     * @param last the spec this rank last submitted under {@code name}, or null
     * @return {@code last} when it is exactly this allreduce (dtype, shape, op, scales), else a new spec: a
     *         tensor reduced again and again reuses one immutable spec instead of allocating it every step
     */
    static OpSpec allreduceSpec(OpSpec last, String name, Tensor t, ReduceOp op, double prescale, double postscale) {
        if (last != null && last.isAllreduce(name, t.dtype(), op, prescale, postscale) && t.hasShape(last.shape)) {
            return last;
        }
        return new OpSpec(name, OpType.ALLREDUCE, t.dtype(), t.shape(), op, prescale, postscale, 0, null);
    }

    /** @throws IllegalArgumentException if the name is not accepted or {@code t} has more dims than the wire carries */
    static void requireOp(String name, Tensor t) {
        requireName(name);
        java.util.Objects.requireNonNull(t, "tensor");
        if (t.rank() > ControlCodec.MAX_DIMS) {
            throw new IllegalArgumentException("tensor '" + name + "' has " + t.rank() + " dims; at most "
                    + ControlCodec.MAX_DIMS + " are supported");
        }
    }

    /**
     * @throws IllegalArgumentException if {@code op} cannot reduce {@code t} in {@code collective}: Adasum takes
     *         floating-point tensors, and allreduce only
     */
    static void requireReduction(String collective, String name, Tensor t, ReduceOp op) {
        java.util.Objects.requireNonNull(op, "op");
        if (op != ReduceOp.ADASUM) {
            return;
        }
        if (!collective.equals("allreduce")) {
            throw new IllegalArgumentException(collective + " of '" + name + "' with ADASUM: Adasum combines whole "
                    + "gradients, so only allreduce takes it; use SUM or AVERAGE here");
        }
        if (!t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("allreduce of '" + name + "' with ADASUM: Adasum combines "
                    + "floating-point gradients, not " + t.dtype() + "; use SUM or AVERAGE for this tensor, or "
                    + "convert it to FLOAT32");
        }
    }

    /** @throws IllegalArgumentException if {@code t} is a scalar, which an op along dim 0 cannot take */
    static void requireDims(String op, Tensor t) {
        if (t.rank() == 0) {
            throw new IllegalArgumentException(op + " needs a tensor with at least one dimension, not a scalar; "
                    + "reshape it to [1]");
        }
    }

    /** @throws IllegalArgumentException if {@code rootRank} is not a rank of a job of {@code size} */
    static void requireRoot(String name, int rootRank, int size) {
        if (rootRank < 0 || rootRank >= size) {
            throw new IllegalArgumentException("broadcast '" + name + "': root rank " + rootRank
                    + " is not a rank of this job (0.." + (size - 1) + ")");
        }
    }

    /**
     * @param splits rows for each rank, or null to split dim 0 equally
     * @return the rows {@code t} sends to each of {@code size} ranks
     */
    static long[] alltoallSplits(String name, Tensor t, int[] splits, int size) {
        long rows = t.shape()[0];
        long[] s = new long[size];
        if (splits == null) {
            if (rows % size != 0) {
                throw new IllegalArgumentException("alltoall '" + name + "': " + rows + " rows do not split equally "
                        + "over " + size + " ranks; pass explicit splits");
            }
            java.util.Arrays.fill(s, rows / size);
        } else {
            if (splits.length != size) {
                throw new IllegalArgumentException("alltoall '" + name + "': splits has " + splits.length
                        + " entries but the job has " + size + " ranks");
            }
            long sum = 0;
            for (int i = 0; i < size; i++) {
                if (splits[i] < 0) {
                    throw new IllegalArgumentException("alltoall '" + name + "': splits[" + i + "] is negative");
                }
                s[i] = splits[i];
                sum += splits[i];
            }
            if (sum != rows) {
                throw new IllegalArgumentException("alltoall '" + name + "': splits sum to " + sum + " but the tensor "
                        + "has " + rows + " rows");
            }
        }
        return s;
    }
}
