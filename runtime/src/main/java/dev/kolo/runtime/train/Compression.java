package dev.kolo.runtime.train;

import dev.kolo.runtime.DType;
import java.util.Locale;

/**
 * How gradients travel between workers. Half precision halves the bytes on the wire at the cost of
 * rounding each gradient to 11 (FP16) or 8 (BF16) significant bits; the sum is computed in float.
 */
public enum Compression {
    /** float32 on the wire: exact averaging. */
    NONE(DType.FLOAT32),
    /** IEEE binary16: more precision, range up to 65504 (large gradients overflow to infinity). */
    FP16(DType.FLOAT16),
    /** bfloat16: float32's range with 8 significant bits. */
    BF16(DType.BFLOAT16);

    private final DType wireType;

    Compression(DType wireType) {
        this.wireType = wireType;
    }

    /** @return the element type gradients are reduced in */
    public DType wireType() {
        return wireType;
    }

    /**
     * @param text {@code none}, {@code fp16} or {@code bf16} (any case)
     * @throws IllegalArgumentException naming the accepted values
     */
    public static Compression parse(String text) {
        switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "none": return NONE;
            case "fp16": case "float16": return FP16;
            case "bf16": case "bfloat16": return BF16;
            default:
                throw new IllegalArgumentException("compression must be none, fp16 or bf16 (got '" + text + "')");
        }
    }
}
