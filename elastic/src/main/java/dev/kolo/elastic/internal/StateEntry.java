package dev.kolo.elastic.internal;

import dev.kolo.runtime.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One registered tensor of an {@code ElasticState}: where its live bytes are (a Java array the model
 * updates, or a buffer) and how to copy them to and from a little-endian off-heap image.
 *
 * <p>Public (in this internal package) because the elastic package's snapshot, checkpoint link and sync
 * read it; only {@link StateRegistry} creates entries, so the subclasses stay package-private.
 */
public abstract class StateEntry {
    public final String name;
    public final DType dtype;
    public final long[] shape;
    public final int byteSize;

    StateEntry(String name, DType dtype, long[] shape, long elements) {
        this.name = name;
        this.dtype = dtype;
        this.shape = shape.length == 0 ? new long[] {elements} : shape.clone();
        long n = 1;
        for (long d : this.shape) {
            if (d < 0) {
                throw new IllegalArgumentException("tensor '" + name + "': negative dimension in "
                        + Arrays.toString(this.shape));
            }
            n *= d;
        }
        if (n != elements) {
            throw new IllegalArgumentException("tensor '" + name + "': shape " + Arrays.toString(this.shape)
                    + " holds " + n + " elements but " + elements + " were given");
        }
        long bytes = elements * dtype.byteSize();
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor '" + name + "' has " + bytes + " bytes; at most "
                    + Integer.MAX_VALUE + " per tensor (split it)");
        }
        this.byteSize = (int) bytes;
    }

    /** Writes the live value into {@code dst} (position 0, little-endian, exactly {@link #byteSize} bytes). */
    public abstract void save(ByteBuffer dst);

    /** Overwrites the live value from {@code src} (position 0, little-endian, {@link #byteSize} bytes). */
    public abstract void load(ByteBuffer src);

    /** @return a short description for layout checks: name, dtype and shape */
    String layout() {
        return name + ":" + dtype + Arrays.toString(shape);
    }

    static ByteBuffer le(ByteBuffer b) {
        return b.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
    }

    static final class Floats extends StateEntry {
        private final float[] values;

        Floats(String name, float[] values, long[] shape) {
            super(name, DType.FLOAT32, shape, values.length);
            this.values = values;
        }

        @Override
        public void save(ByteBuffer dst) {
            le(dst).asFloatBuffer().put(values);
        }

        @Override
        public void load(ByteBuffer src) {
            le(src).asFloatBuffer().get(values);
        }
    }

    static final class Doubles extends StateEntry {
        private final double[] values;

        Doubles(String name, double[] values, long[] shape) {
            super(name, DType.FLOAT64, shape, values.length);
            this.values = values;
        }

        @Override
        public void save(ByteBuffer dst) {
            le(dst).asDoubleBuffer().put(values);
        }

        @Override
        public void load(ByteBuffer src) {
            le(src).asDoubleBuffer().get(values);
        }
    }

    static final class Ints extends StateEntry {
        private final int[] values;

        Ints(String name, int[] values, long[] shape) {
            super(name, DType.INT32, shape, values.length);
            this.values = values;
        }

        @Override
        public void save(ByteBuffer dst) {
            le(dst).asIntBuffer().put(values);
        }

        @Override
        public void load(ByteBuffer src) {
            le(src).asIntBuffer().get(values);
        }
    }

    static final class Longs extends StateEntry {
        private final long[] values;

        Longs(String name, long[] values, long[] shape) {
            super(name, DType.INT64, shape, values.length);
            this.values = values;
        }

        @Override
        public void save(ByteBuffer dst) {
            le(dst).asLongBuffer().put(values);
        }

        @Override
        public void load(ByteBuffer src) {
            le(src).asLongBuffer().get(values);
        }
    }

    /** A caller-owned buffer (direct or heap) holding the tensor's little-endian bytes from position 0. */
    static final class Buffer extends StateEntry {
        private final ByteBuffer data;

        Buffer(String name, DType dtype, ByteBuffer data, long[] shape) {
            super(name, dtype, shape, elements(dtype, data, shape));
            if (data.isReadOnly()) {
                throw new IllegalArgumentException("tensor '" + name + "': the buffer is read-only, so restore() "
                        + "could not write it; register the writable buffer the tensor wraps");
            }
            if (data.capacity() < byteSize) {
                throw new IllegalArgumentException("tensor '" + name + "': buffer of " + data.capacity()
                        + " bytes is smaller than its shape needs (" + byteSize + ")");
            }
            this.data = data;
        }

        private static long elements(DType dtype, ByteBuffer data, long[] shape) {
            if (shape.length == 0) {
                return data.capacity() / dtype.byteSize();
            }
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            return n;
        }

        @Override
        public void save(ByteBuffer dst) {
            dst.duplicate().clear().put(data.duplicate().clear().limit(byteSize));
        }

        @Override
        public void load(ByteBuffer src) {
            data.duplicate().clear().put(src.duplicate().clear().limit(byteSize));
        }
    }
}
