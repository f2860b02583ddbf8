package dev.kolo.runtime;

import dev.kolo.kernels.ElementType;

/** Element type of a {@link Tensor}. All types are stored little-endian. */
public enum DType {
    /** IEEE 754 binary32. */
    FLOAT32(4, ElementType.FLOAT32),
    /** IEEE 754 binary64. */
    FLOAT64(8, ElementType.FLOAT64),
    /** IEEE 754 binary16; reductions are computed in float and rounded once per element. */
    FLOAT16(2, ElementType.FLOAT16),
    /** bfloat16 (the upper half of a binary32); reductions are computed in float. */
    BFLOAT16(2, ElementType.BFLOAT16),
    /** Signed 8-bit integer; arithmetic wraps around. */
    INT8(1, ElementType.INT8),
    /** Unsigned 8-bit integer; arithmetic wraps around. */
    UINT8(1, ElementType.UINT8),
    /** Signed 32-bit integer; arithmetic wraps around. */
    INT32(4, ElementType.INT32),
    /** Signed 64-bit integer; arithmetic wraps around. */
    INT64(8, ElementType.INT64);

    private final int byteSize;
    private final ElementType elementType;

    DType(int byteSize, ElementType elementType) {
        this.byteSize = byteSize;
        this.elementType = elementType;
    }

    /**
     * @return the kernels' name of this type, for calling {@code dev.kolo.kernels} on a tensor's bytes: the one
     *         mapping between the two, so no hot path looks a type up by name
     */
    public ElementType elementType() {
        return elementType;
    }

    /** @return bytes per element */
    public int byteSize() {
        return byteSize;
    }

    /** @return true for the floating-point types */
    public boolean isFloatingPoint() {
        return this == FLOAT32 || this == FLOAT64 || this == FLOAT16 || this == BFLOAT16;
    }
}
