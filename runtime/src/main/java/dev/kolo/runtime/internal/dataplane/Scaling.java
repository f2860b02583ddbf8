package dev.kolo.runtime.internal.dataplane;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.Kernels;
import dev.kolo.runtime.DType;
import java.nio.ByteBuffer;

/** Scales elements in place through the kernels; a factor of exactly 1 is skipped. */
final class Scaling {
    private Scaling() {
    }

    static void apply(Kernels kernels, ByteBuffer buf, int offset, long count, DType dtype, double factor) {
        if (factor != 1.0 && count > 0) {
            kernels.scale(elementType(dtype), buf, offset, count, factor);
        }
    }

    static ElementType elementType(DType dtype) {
        return ElementType.valueOf(dtype.name());
    }
}
