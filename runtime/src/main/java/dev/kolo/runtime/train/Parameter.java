package dev.kolo.runtime.train;

import java.util.Arrays;
import java.util.Objects;

/**
 * A named trainable array and its gradient, both plain {@code float[]} owned by the model: the model's
 * backward pass overwrites {@link #gradient()} each pass, and the optimizer updates {@link #values()} in
 * place. The name identifies the parameter across ranks, so every rank must use the same names.
 */
public final class Parameter {
    private final String name;
    private final float[] values;
    private final float[] gradient;
    private final long[] shape;

    private Parameter(String name, float[] values, float[] gradient, long[] shape) {
        this.name = name;
        this.values = values;
        this.gradient = gradient;
        this.shape = shape;
    }

    /**
     * @param shape the logical shape (for checkpoints and messages); its product must be {@code values.length}
     * @throws IllegalArgumentException if the arrays differ in length or do not match the shape
     */
    public static Parameter of(String name, float[] values, float[] gradient, long... shape) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a parameter needs a name that identifies it across ranks");
        }
        if (values.length != gradient.length) {
            throw new IllegalArgumentException("parameter '" + name + "': " + values.length + " values but "
                    + gradient.length + " gradient elements");
        }
        long[] dims = shape.length == 0 ? new long[] {values.length} : shape.clone();
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        if (n != values.length) {
            throw new IllegalArgumentException("parameter '" + name + "': shape " + Arrays.toString(dims)
                    + " holds " + n + " elements but it has " + values.length);
        }
        return new Parameter(name, values, gradient, dims);
    }

    /** @return the name shared by every rank */
    public String name() {
        return name;
    }

    /** @return the live parameter values (not a copy) */
    public float[] values() {
        return values;
    }

    /** @return the live gradient (not a copy); after a step it holds the average over ranks and passes */
    public float[] gradient() {
        return gradient;
    }

    /** @return a copy of the shape */
    public long[] shape() {
        return shape.clone();
    }

    /** @return the number of elements */
    public int size() {
        return values.length;
    }

    @Override
    public String toString() {
        return "Parameter[" + name + " " + Arrays.toString(shape) + "]";
    }
}
