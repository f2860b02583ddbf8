package dev.kolo.runtime.train;

import java.util.Locale;
import java.util.Objects;

/**
 * The large-batch learning-rate recipe: the base rate (tuned for one worker) is scaled for a batch
 * {@code multiplier} times larger ({@link LrScaling}), and reached by a gradual linear warm-up from the base
 * rate over the first {@code warmupEpochs} (Goyal et al. 2017), after which it stays at the scaled rate,
 * optionally decaying to zero along a half cosine by {@code totalEpochs}. Immutable; {@link #rescaled}
 * gives the schedule for a new number of workers (elastic resize).
 */
public final class LearningRateSchedule {
    private final double base;
    private final LrScaling scaling;
    private final double multiplier;
    private final double warmupEpochs;
    private final long stepsPerEpoch;
    private final double decayEpochs;

    private LearningRateSchedule(double base, LrScaling scaling, double multiplier, double warmupEpochs,
                                 long stepsPerEpoch, double decayEpochs) {
        this.base = base;
        this.scaling = scaling;
        this.multiplier = multiplier;
        this.warmupEpochs = warmupEpochs;
        this.stepsPerEpoch = stepsPerEpoch;
        this.decayEpochs = decayEpochs;
        scaling.factor(multiplier); // validates the multiplier
    }

    /** @param baseRate the learning rate that suits one worker's batch */
    public static Builder builder(double baseRate) {
        return new Builder(baseRate);
    }

    /** @return the learning rate for optimizer step {@code step} (0-based) */
    public double rate(long step) {
        return rateAtEpoch((double) step / stepsPerEpoch);
    }

    /** @return the learning rate at fractional epoch {@code epoch} (0 = start of training) */
    public double rateAtEpoch(double epoch) {
        double target = targetRate();
        double r = epoch < warmupEpochs ? base + (target - base) * epoch / warmupEpochs : target;
        if (decayEpochs > 0 && epoch > warmupEpochs) {
            double progress = Math.min(1, (epoch - warmupEpochs) / Math.max(1e-9, decayEpochs - warmupEpochs));
            r *= 0.5 * (1 + Math.cos(Math.PI * progress));
        }
        return r;
    }

    /** @return the scaled rate reached after the warm-up */
    public double targetRate() {
        return base * scaling.factor(multiplier);
    }

    /** @return the unscaled base rate */
    public double baseRate() {
        return base;
    }

    /** @return the batch multiplier the rate is scaled for */
    public double multiplier() {
        return multiplier;
    }

    /** @return the scaling rule */
    public LrScaling scaling() {
        return scaling;
    }

    /** @return the length of the warm-up in epochs (0 for none) */
    public double warmupEpochs() {
        return warmupEpochs;
    }

    /**
     * The same schedule for a different batch multiplier, e.g. after an elastic job changed its number of
     * workers; the warm-up keeps its epochs (a job resized after the warm-up jumps to the new target rate).
     * Give a new {@code stepsPerEpoch} too, since an epoch then takes a different number of steps.
     */
    public LearningRateSchedule rescaled(double newMultiplier, long newStepsPerEpoch) {
        if (newStepsPerEpoch < 1) {
            throw new IllegalArgumentException("stepsPerEpoch must be at least 1");
        }
        return new LearningRateSchedule(base, scaling, newMultiplier, warmupEpochs, newStepsPerEpoch, decayEpochs);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "lr %.4g x %s(%.4g) = %.4g, warm-up %.3g epochs%s", base,
                scaling.name().toLowerCase(Locale.ROOT), multiplier, targetRate(), warmupEpochs,
                decayEpochs > 0 ? String.format(Locale.ROOT, ", cosine decay to epoch %.3g", decayEpochs) : "");
    }

    /** Settings of a {@link LearningRateSchedule}. */
    public static final class Builder {
        private final double base;
        private LrScaling scaling = LrScaling.NONE;
        private double multiplier = 1;
        private double warmupEpochs;
        private long stepsPerEpoch = 1;
        private double decayEpochs;

        private Builder(double base) {
            if (!(base > 0) || Double.isInfinite(base)) {
                throw new IllegalArgumentException("learning rate must be a positive number (got " + base + ")");
            }
            this.base = base;
        }

        /**
         * @param multiplier how many times the single-worker batch the global batch is: usually
         *                   {@code workers * backwardPassesPerStep}
         */
        public Builder scaling(LrScaling scaling, double multiplier) {
            this.scaling = Objects.requireNonNull(scaling, "scaling");
            scaling.factor(multiplier);
            this.multiplier = multiplier;
            return this;
        }

        /** Epochs of linear warm-up from the base rate to the scaled one; 0 (default) for none. */
        public Builder warmupEpochs(double epochs) {
            Checks.notNegative("warm-up epochs", epochs);
            this.warmupEpochs = epochs;
            return this;
        }

        /** Optimizer steps per epoch, to convert steps into epochs; default 1. */
        public Builder stepsPerEpoch(long steps) {
            Checks.atLeastOne("stepsPerEpoch", steps);
            this.stepsPerEpoch = steps;
            return this;
        }

        /** After the warm-up, decay along a half cosine to zero at epoch {@code totalEpochs}; 0 (default) keeps the rate. */
        public Builder cosineDecay(double totalEpochs) {
            Checks.notNegative("decay epochs", totalEpochs);
            this.decayEpochs = totalEpochs;
            return this;
        }

        public LearningRateSchedule build() {
            return new LearningRateSchedule(base, scaling, multiplier, warmupEpochs, stepsPerEpoch, decayEpochs);
        }
    }
}
