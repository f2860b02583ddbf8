package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A float32 engine array seen as a Kolo {@link Tensor} for one collective. Where the engine hands out a view of
 * the array's own memory (the PyTorch engine does for a contiguous CPU tensor) the collective reads and writes
 * that memory in place: nothing is copied. Otherwise the tensor is a copy and {@link #finish} writes the result
 * back through {@link NDArray#set(java.nio.Buffer)}. Which case holds is found once, by a probe.
 */
final class EngineTensor {
    private Boolean shared;
    private NDArray array;
    private Tensor tensor;

    /** @return a tensor over {@code array}'s values, valid until {@link #finish} */
    Tensor open(NDArray array) {
        if (array.getDataType() != DataType.FLOAT32) {
            throw new IllegalArgumentException("array of " + array.getDataType() + ": Kolo exchanges float32 "
                    + "arrays (cast the model with Block.cast(DataType.FLOAT32))");
        }
        if (shared == null) {
            shared = EngineArrays.shared(array);
        }
        ByteBuffer bytes = array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN);
        if (!bytes.isDirect()) {
            ByteBuffer direct = ByteBuffer.allocateDirect(bytes.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            direct.put(bytes).flip();
            bytes = direct;
        }
        this.array = array;
        this.tensor = Tensor.wrap(DType.FLOAT32, bytes, array.getShape().getShape());
        return tensor;
    }

    /** @return the tensor {@link #open} returned (its {@code data()} is the engine's memory where shared) */
    Tensor view() {
        return tensor;
    }

    /** Forgets the tensor without writing anything back (its collective failed or was abandoned). */
    void drop() {
        array = null;
        tensor = null;
    }

    /** Writes the collective's result into the engine's array where the tensor was a copy. */
    void finish() {
        if (array != null && !shared) {
            ByteBuffer result = tensor.buffer().duplicate().order(ByteOrder.nativeOrder());
            array.set(result.asFloatBuffer());
        }
        array = null;
        tensor = null;
    }
}
