package dev.kolo.kernels;

/**
 * Element types the kernels reduce, scale and convert.
 *
 * <p>{@link #code()} is stable: it is the number the native C ABI ({@code KOLO_FLOAT32} ...)
 * takes and may be written to the wire or to checkpoints, so existing codes never change.
 * Elements are stored in native byte order.
 */
public enum ElementType {
    /** IEEE 754 binary32. */
    FLOAT32(0, 4, "float32"),
    /** IEEE 754 binary64. */
    FLOAT64(1, 8, "float64"),
    /** IEEE 754 binary16; arithmetic is done in float and rounded once per element. */
    FLOAT16(2, 2, "float16"),
    /** bfloat16 (the top half of a binary32); arithmetic is done in float and rounded once. */
    BFLOAT16(3, 2, "bfloat16"),
    /** Signed 8-bit integer; arithmetic wraps around. */
    INT8(4, 1, "int8"),
    /** Unsigned 8-bit integer; arithmetic wraps around. */
    UINT8(5, 1, "uint8"),
    /** Signed 32-bit integer; arithmetic wraps around. */
    INT32(6, 4, "int32"),
    /** Signed 64-bit integer; arithmetic wraps around. */
    INT64(7, 8, "int64");

    private static final ElementType[] BY_CODE = values();

    private final int code;
    private final int byteSize;
    private final String label;

    ElementType(int code, int byteSize, String label) {
        this.code = code;
        this.byteSize = byteSize;
        this.label = label;
    }

    /** Stable numeric code, shared with the native ABI. */
    public int code() {
        return code;
    }

    /** Size of one element in bytes. */
    public int byteSize() {
        return byteSize;
    }

    /** Lower-case name used in benchmark output and metric labels, e.g. {@code "float16"}. */
    public String label() {
        return label;
    }

    /** True for the four floating-point types. */
    public boolean isFloatingPoint() {
        return code <= BFLOAT16.code;
    }

    /**
     * The type with this {@link #code()}.
     *
     * @throws IllegalArgumentException if no type has this code
     */
    public static ElementType fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown element type code " + code);
        }
        return BY_CODE[code];
    }
}
