package dev.kolo.kernels;

/**
 * Element-wise reductions: {@code dst[i] = op(dst[i], src[i])}.
 *
 * <p>Floating-point {@link #MIN} and {@link #MAX} follow {@link Math#min(float, float)}: a NaN
 * operand makes the result NaN, and {@code -0.0} is smaller than {@code +0.0}. Integer
 * {@link #SUM} and {@link #PRODUCT} wrap around. {@link #code()} is stable (native ABI).
 */
public enum ReductionOp {
    /** Addition. */
    SUM(0, "sum"),
    /** Minimum; NaN propagates. */
    MIN(1, "min"),
    /** Maximum; NaN propagates. */
    MAX(2, "max"),
    /** Multiplication. */
    PRODUCT(3, "prod");

    private static final ReductionOp[] BY_CODE = values();

    private final int code;
    private final String label;

    ReductionOp(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** Stable numeric code, shared with the native ABI. */
    public int code() {
        return code;
    }

    /** Short lower-case name used in benchmark output, e.g. {@code "prod"}. */
    public String label() {
        return label;
    }

    /**
     * The op with this {@link #code()}.
     *
     * @throws IllegalArgumentException if no op has this code
     */
    public static ReductionOp fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown reduction op code " + code);
        }
        return BY_CODE[code];
    }
}
