package dev.kolo.runtime;

/** Element type of a {@link Tensor}. All types are stored little-endian. */
public enum DType {
    /** IEEE 754 binary32. */
    FLOAT32(4),
    /** IEEE 754 binary64. */
    FLOAT64(8),
    /** IEEE 754 binary16; reductions are computed in float and rounded once per element. */
    FLOAT16(2),
    /** bfloat16 (the upper half of a binary32); reductions are computed in float. */
    BFLOAT16(2),
    /** Signed 8-bit integer; arithmetic wraps around. */
    INT8(1),
    /** Unsigned 8-bit integer; arithmetic wraps around. */
    UINT8(1),
    /** Signed 32-bit integer; arithmetic wraps around. */
    INT32(4),
    /** Signed 64-bit integer; arithmetic wraps around. */
    INT64(8);

    private final int byteSize;

    DType(int byteSize) {
        this.byteSize = byteSize;
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
