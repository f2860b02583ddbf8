package dev.kolo.runtime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A dense, row-major, little-endian tensor held off-heap in a direct buffer, so the data plane and the
 * native kernels read it without a copy. An empty shape is a scalar. Tensors passed to collectives are
 * never modified; results are new tensors.
 *
 * <p>One tensor holds at most {@link Integer#MAX_VALUE} bytes (the limit of a direct buffer).
 */
public final class Tensor {
    private final DType dtype;
    private final long[] shape;
    private final long numElements;
    private final ByteBuffer data;

    private Tensor(DType dtype, long[] shape, ByteBuffer data) {
        this.dtype = dtype;
        this.shape = shape;
        this.numElements = elementCount(shape);
        this.data = data;
    }

    /** @return a zero-filled tensor of the given type and shape */
    public static Tensor allocate(DType dtype, long... shape) {
        Objects.requireNonNull(dtype, "dtype");
        long[] dims = checkedShape(shape);
        long bytes = byteCount(dtype, elementCount(dims));
        return new Tensor(dtype, dims, ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.LITTLE_ENDIAN));
    }

    /**
     * Wraps an existing direct buffer without copying: the tensor reads bytes
     * {@code [position, position + size)} of it, little-endian.
     *
     * @throws IllegalArgumentException if the buffer is not direct or holds too few bytes
     */
    public static Tensor wrap(DType dtype, ByteBuffer direct, long... shape) {
        Objects.requireNonNull(dtype, "dtype");
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("Tensor.wrap needs a direct ByteBuffer (ByteBuffer.allocateDirect); "
                    + "use Tensor.of(...) to copy heap data");
        }
        long[] dims = checkedShape(shape);
        long bytes = byteCount(dtype, elementCount(dims));
        if (direct.remaining() < bytes) {
            throw new IllegalArgumentException("buffer has " + direct.remaining() + " bytes remaining but shape "
                    + Arrays.toString(dims) + " of " + dtype + " needs " + bytes);
        }
        ByteBuffer view = direct.slice().limit((int) bytes).slice().order(ByteOrder.LITTLE_ENDIAN);
        return new Tensor(dtype, dims, view);
    }

    /** @return a FLOAT32 tensor holding a copy of {@code values}; no dims means a scalar */
    public static Tensor of(float[] values, long... shape) {
        Tensor t = allocateFor(DType.FLOAT32, values.length, shape);
        t.data.asFloatBuffer().put(values);
        return t;
    }

    /** @return a FLOAT64 tensor holding a copy of {@code values} */
    public static Tensor of(double[] values, long... shape) {
        Tensor t = allocateFor(DType.FLOAT64, values.length, shape);
        t.data.asDoubleBuffer().put(values);
        return t;
    }

    /** @return an INT32 tensor holding a copy of {@code values} */
    public static Tensor of(int[] values, long... shape) {
        Tensor t = allocateFor(DType.INT32, values.length, shape);
        t.data.asIntBuffer().put(values);
        return t;
    }

    /** @return an INT64 tensor holding a copy of {@code values} */
    public static Tensor of(long[] values, long... shape) {
        Tensor t = allocateFor(DType.INT64, values.length, shape);
        t.data.asLongBuffer().put(values);
        return t;
    }

    /** @return an INT8 tensor holding a copy of {@code values} */
    public static Tensor of(byte[] values, long... shape) {
        Tensor t = allocateFor(DType.INT8, values.length, shape);
        t.data.duplicate().put(values);
        return t;
    }

    /**
     * Converting factory: stores {@code values} as {@code dtype}. Half types round to nearest even;
     * integer types truncate toward zero (Java's narrowing conversion).
     */
    public static Tensor of(DType dtype, float[] values, long... shape) {
        Tensor t = allocateFor(dtype, values.length, shape);
        for (int i = 0; i < values.length; i++) {
            ElementAccess.putDouble(t.data, dtype, i, values[i]);
        }
        return t;
    }

    /** @return the element type */
    public DType dtype() {
        return dtype;
    }

    /** @return a copy of the shape; empty for a scalar */
    public long[] shape() {
        return shape.clone();
    }

    /** @return whether the shape is {@code dims}, compared without the copy {@link #shape} makes */
    boolean hasShape(long[] dims) {
        return Arrays.equals(shape, dims);
    }

    /** @return the number of dimensions (0 for a scalar) */
    public int rank() {
        return shape.length;
    }

    /** @return the product of the shape */
    public long numElements() {
        return numElements;
    }

    /** @return the size of the data in bytes */
    public long byteSize() {
        return numElements * dtype.byteSize();
    }

    /**
     * @return a read-only little-endian view of the data (position 0, limit {@link #byteSize()}); no copy
     */
    public ByteBuffer buffer() {
        return data.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The writable backing buffer, for the runtime's own data plane and kernels. */
    public ByteBuffer data() {
        return data;
    }

    /** @return the elements converted to float (exact for FLOAT32, FLOAT16, BFLOAT16) */
    public float[] toFloatArray() {
        float[] out = new float[checkedArrayLength()];
        if (dtype == DType.FLOAT32) {
            data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
        } else {
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) ElementAccess.getDouble(data, dtype, i);
            }
        }
        return out;
    }

    /** @return the elements converted to double (exact for every type except INT64 beyond 2^53) */
    public double[] toDoubleArray() {
        double[] out = new double[checkedArrayLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ElementAccess.getDouble(data, dtype, i);
        }
        return out;
    }

    /** @return the elements converted to int (floating types truncate toward zero) */
    public int[] toIntArray() {
        int[] out = new int[checkedArrayLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (int) ElementAccess.getLong(data, dtype, i);
        }
        return out;
    }

    /** @return the elements converted to long (floating types truncate toward zero) */
    public long[] toLongArray() {
        long[] out = new long[checkedArrayLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ElementAccess.getLong(data, dtype, i);
        }
        return out;
    }

    /** @return a copy of the raw little-endian bytes (for INT8 and UINT8, the elements themselves) */
    public byte[] toByteArray() {
        byte[] out = new byte[(int) byteSize()];
        data.duplicate().get(out);
        return out;
    }

    @Override
    public String toString() {
        return "Tensor[" + dtype + " " + Arrays.toString(shape) + "]";
    }

    private int checkedArrayLength() {
        if (numElements > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("tensor of " + numElements + " elements does not fit a Java array");
        }
        return (int) numElements;
    }

    private static Tensor allocateFor(DType dtype, int valueCount, long[] shape) {
        long[] dims = checkedShape(shape);
        long count = elementCount(dims);
        if (count != valueCount) {
            throw new IllegalArgumentException("shape " + Arrays.toString(dims) + " holds " + count
                    + " elements but " + valueCount + " values were given");
        }
        return allocate(dtype, dims);
    }

    private static long[] checkedShape(long[] shape) {
        long[] dims = shape == null ? new long[0] : shape.clone();
        for (long d : dims) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(dims));
            }
        }
        elementCount(dims);
        return dims;
    }

    /** Product of the dims, failing on overflow rather than wrapping. */
    public static long elementCount(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    private static long byteCount(DType dtype, long elements) {
        long bytes = Math.multiplyExact(elements, (long) dtype.byteSize());
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor of " + bytes + " bytes exceeds the 2 GiB limit of one "
                    + "tensor; split it into several named tensors");
        }
        return bytes;
    }
}
