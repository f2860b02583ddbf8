package dev.kolo.runtime.train;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.Kernels;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * One parameter's persistent exchange buffers, allocated once so a step allocates nothing: a float32
 * staging buffer the gradient is copied into, and (with compression) a half-precision wire buffer it is
 * converted into. The wire tensor is reduced in place. Also the local accumulator for gradient
 * accumulation over several backward passes.
 */
final class GradientSlot {
    final Parameter parameter;
    final String wireName;
    private final int count;
    private final ByteBuffer staging;
    private final FloatBuffer stagingFloats;
    private final ByteBuffer wireBytes;
    private final Tensor wire;
    private final ElementType wireType;
    private float[] accumulator;

    GradientSlot(Parameter parameter, String wireName, Compression compression) {
        this.parameter = parameter;
        this.wireName = wireName;
        this.count = parameter.size();
        this.staging = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        this.stagingFloats = staging.asFloatBuffer();
        this.wireType = elementType(compression.wireType());
        // Without compression the staging buffer itself goes on the wire: one copy fewer.
        this.wireBytes = compression == Compression.NONE ? staging
                : ByteBuffer.allocateDirect(count * compression.wireType().byteSize()).order(ByteOrder.LITTLE_ENDIAN);
        this.wire = Tensor.wrap(compression.wireType(), wireBytes, parameter.shape());
    }

    /** Adds this pass's gradient to the local sum; the first pass of a step overwrites it. */
    void accumulate(boolean first) {
        float[] g = parameter.gradient();
        if (accumulator == null) {
            accumulator = new float[count];
        }
        float[] a = accumulator;
        if (first) {
            System.arraycopy(g, 0, a, 0, count);
        } else {
            for (int i = 0; i < count; i++) {
                a[i] += g[i];
            }
        }
    }

    /** Copies this step's gradient (plus what earlier passes accumulated), times {@code weight}, to the wire. */
    Tensor pack(boolean accumulated, double weight) {
        float[] g = parameter.gradient();
        if (accumulated) {
            float[] a = accumulator;
            for (int i = 0; i < count; i++) {
                a[i] += g[i];
            }
            g = a;
        }
        if (weight == 1) {
            stagingFloats.put(0, g);
        } else {
            // Weighed here, not by the allreduce's prescale, which must be the same on every rank.
            for (int i = 0; i < count; i++) {
                stagingFloats.put(i, (float) (g[i] * weight));
            }
        }
        if (wireBytes != staging) {
            Kernels.get().convert(wireType, wireBytes, 0, ElementType.FLOAT32, staging, 0, count);
        }
        return wire;
    }

    /** Copies the reduced wire tensor back into the parameter's gradient array. */
    void unpack() {
        if (wireBytes != staging) {
            Kernels.get().convert(ElementType.FLOAT32, staging, 0, wireType, wireBytes, 0, count);
        }
        stagingFloats.get(0, parameter.gradient());
    }

    /** @return a float32 tensor holding a copy of the parameter's values, in the staging buffer (for broadcast) */
    Tensor stageValues() {
        stagingFloats.put(0, parameter.values());
        return Tensor.wrap(DType.FLOAT32, staging, parameter.shape());
    }

    private static ElementType elementType(DType t) {
        if (t != DType.FLOAT32 && t != DType.FLOAT16 && t != DType.BFLOAT16) {
            throw new IllegalArgumentException("no wire type for " + t);
        }
        return t.elementType();
    }
}
