package dev.kolo.runtime.train;

import java.util.Locale;

/**
 * How the learning rate grows with the batch multiplier (workers times backward passes per step): the
 * global batch is that many times the single-worker batch, so each step averages that many more samples.
 */
public enum LrScaling {
    /** Keep the base rate (for a fixed global batch). */
    NONE,
    /** Multiply by the multiplier: the linear scaling rule of Goyal et al. (2017). */
    LINEAR,
    /** Multiply by its square root: gentler, keeps the gradient noise scale (Krizhevsky 2014). */
    SQRT;

    /** @return the factor the base rate is multiplied by for a batch {@code multiplier} times larger */
    public double factor(double multiplier) {
        if (!(multiplier >= 1)) {
            throw new IllegalArgumentException("batch multiplier must be at least 1 (got " + multiplier + ")");
        }
        switch (this) {
            case LINEAR: return multiplier;
            case SQRT: return Math.sqrt(multiplier);
            default: return 1;
        }
    }

    /**
     * @param text {@code none}, {@code linear} or {@code sqrt} (any case)
     * @throws IllegalArgumentException naming the accepted values
     */
    public static LrScaling parse(String text) {
        switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "none": return NONE;
            case "linear": return LINEAR;
            case "sqrt": return SQRT;
            default:
                throw new IllegalArgumentException("learning-rate scaling must be linear, sqrt or none (got '"
                        + text + "')");
        }
    }
}
