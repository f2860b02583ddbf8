package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.DType;
import java.nio.ByteBuffer;

/**
 * Typed element access for tests, with values as double: the kernels' shared test helper
 * ({@link dev.kolo.kernels.testing.Elements}) for DTypes.
 */
public final class Elements {
    private Elements() {
    }

    public static void put(DType t, ByteBuffer b, int i, double v) {
        dev.kolo.kernels.testing.Elements.putValue(t.elementType(), b, i, v);
    }

    /** Integer types: exact long value (UINT8 as 0..255). */
    public static long getLong(DType t, ByteBuffer b, int i) {
        return dev.kolo.kernels.testing.Elements.getInteger(t.elementType(), b, i);
    }

    public static double get(DType t, ByteBuffer b, int i) {
        return dev.kolo.kernels.testing.Elements.getValue(t.elementType(), b, i);
    }

    /** Wraps a long to the width of an integer type (UINT8 to 0..255). */
    public static long wrap(DType t, long v) {
        return dev.kolo.kernels.testing.Elements.wrap(t.elementType(), v);
    }

    /** Scaling as the kernels do it: in double, truncated, saturated to the type (UINT8 to 0..255). */
    public static long scaled(DType t, long v, double factor) {
        return dev.kolo.kernels.testing.Elements.saturate(t.elementType(), v * factor);
    }

    public static ByteBuffer direct(int bytes) {
        return dev.kolo.kernels.testing.Elements.direct(bytes);
    }

    public static byte[] bytes(ByteBuffer b, int offset, int length) {
        return dev.kolo.kernels.testing.Elements.bytes(b, offset, length);
    }
}
