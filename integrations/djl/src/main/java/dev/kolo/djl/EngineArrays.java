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
            if (gradientShared == null) {
                gradientShared = shared(gradient);
            }
            FloatBuffer view = view(gradient);
            view.get(0, into);
            if (gradientShared) {
                for (int i = 0; i < into.length; i++) {
                    view.put(i, 0f);
                }
            } else {
                gradient.set(new float[into.length]);
            }
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
