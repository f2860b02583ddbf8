package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * Copies one parameter's values and gradient between the engine's arrays and Kolo's {@code float[]}s. Where
 * {@link NDArray#toByteBuffer(boolean)} hands out a view of the array's own memory (the PyTorch engine does for
 * a contiguous CPU tensor), values are read and written and the gradient cleared through that view: one copy,
 * no allocation beyond the view object. Otherwise the view is a copy, and writes go through
 * {@link NDArray#set(float[])}. Which case holds is found once per array by a probe.
 */
final class EngineArrays {
    private Boolean valuesShared;
    private Boolean gradientShared;

    void readValues(NDArray array, float[] into) {
        view(array).get(0, into);
    }

    void writeValues(NDArray array, float[] values) {
        if (valuesShared == null) {
            valuesShared = shared(array);
        }
        if (valuesShared) {
            view(array).put(0, values);
        } else {
            array.set(values);
        }
    }

    /** Copies the array's gradient into {@code into} and sets it to zero, so the next pass starts afresh. */
    void takeGradient(NDArray array, float[] into) {
        try (NDArray gradient = array.getGradient()) {
            view(gradient).get(0, into);
            zero(gradient);
        }
    }

    /**
     * Copies {@code gradient} (an update's gradient, as DJL's parameter server hands it over) into {@code into}, then
     * sets {@code array}'s own gradient to zero: engines such as PyTorch add each backward pass to the gradient
     * there, and DJL's own optimizers clear it in their update, so one that replaces them must too.
     */
    void takeGradient(NDArray array, NDArray gradient, float[] into) {
        view(gradient).get(0, into);
        try (NDArray own = array.getGradient()) {
            zero(own);
        }
    }

    private void zero(NDArray gradient) {
        if (gradientShared == null) {
            gradientShared = shared(gradient);
        }
        if (gradientShared) {
            FloatBuffer view = view(gradient);
            for (int i = 0, n = view.capacity(); i < n; i++) {
                view.put(i, 0f);
            }
        } else {
            gradient.set(new float[Math.toIntExact(gradient.size())]);
        }
    }

    private static FloatBuffer view(NDArray array) {
        return array.toByteBuffer(true).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    /** True when writing into the array's byte buffer changes the array itself. */
    static boolean shared(NDArray array) {
        if (array.size() == 0) {
            return true;
        }
        FloatBuffer view = view(array);
        float old = view.get(0);
        float probe = Float.intBitsToFloat(Float.floatToRawIntBits(old) ^ 1);
        view.put(0, probe);
        boolean shared = Float.floatToRawIntBits(array.toFloatArray()[0]) == Float.floatToRawIntBits(probe);
        view.put(0, old);
        return shared;
    }
}
