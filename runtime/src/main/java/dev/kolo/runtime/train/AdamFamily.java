package dev.kolo.runtime.train;

/**
 * What {@link Adam}, {@link AdamW} and {@link Lamb} share: their arguments' checks, the {@link AdamMoments} they
 * keep per parameter name, one step of those moments before each update, and the state they hand over. Each
 * rule adds only its update of the weights from the moments' direction ({@link #update}).
 */
abstract class AdamFamily implements UpdateRule {
    private final AdamMoments moments;
    /** The weight decay as given (checked: finite, not negative); each rule applies it its own way. */
    final double weightDecay;

    /**
     * @param rule the rule's name, for messages
     * @throws IllegalArgumentException naming the bad value and the valid range
     */
    AdamFamily(String rule, double beta1, double beta2, double epsilon, double weightDecay) {
        this.moments = new AdamMoments(rule, beta1, beta2, epsilon);
        AdamMoments.checkWeightDecay(rule, weightDecay);
        this.weightDecay = weightDecay;
    }

    /** With beta1 0.9, beta2 0.999 and epsilon 1e-8. */
    AdamFamily(String rule, double weightDecay) {
        this(rule, AdamMoments.DEFAULT_BETA1, AdamMoments.DEFAULT_BETA2, AdamMoments.DEFAULT_EPSILON, weightDecay);
    }

    /** Advances {@code p}'s moments (with {@link #gradientL2()} added to the gradient), then {@link #update}s. */
    @Override
    public final void apply(Parameter p, double learningRate) {
        update(moments.advance(p, gradientL2()), p.values(), learningRate);
    }

    /** @return the L2 penalty that enters the moments through the gradient: 0 unless the rule is Adam's own */
    float gradientL2() {
        return 0f;
    }

    /** Moves the weights {@code w} from the moments {@code s} just advanced (see {@code Moments#direction}). */
    abstract void update(AdamMoments.Moments s, float[] w, double learningRate);

    /**
     * Hands over {@code p.name() + ".m"} and {@code ".v"} (the parameter's shape) and {@code ".step"} (a
     * {@code long[1]}).
     */
    @Override
    public final void state(Parameter p, StateSink sink) {
        moments.state(p, sink);
    }
}
