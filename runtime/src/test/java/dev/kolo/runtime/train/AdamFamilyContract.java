package dev.kolo.runtime.train;

import dev.kolo.testing.DoubleAdam;
import java.util.function.DoubleFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What every Adam-family rule's test checks (see {@link RuleChecks}): steps against the double reference with
 * and without weight decay, live and complete state, and the refusal of bad constructor arguments. A rule's test
 * extends it with the rule's own properties.
 */
abstract class AdamFamilyContract {
    private final String rule;
    private final DoubleAdam.Kind kind;
    private final DoubleFunction<UpdateRule> withWeightDecay;
    private final RuleChecks.Factory constructor;

    /**
     * @param rule            the rule's name, as its messages give it
     * @param kind            its double-precision reference
     * @param withWeightDecay its one-argument constructor (default betas and epsilon)
     * @param constructor     its four-argument constructor
     */
    AdamFamilyContract(String rule, DoubleAdam.Kind kind, DoubleFunction<UpdateRule> withWeightDecay,
                       RuleChecks.Factory constructor) {
        this.rule = rule;
        this.kind = kind;
        this.withWeightDecay = withWeightDecay;
        this.constructor = constructor;
    }

    @ParameterizedTest(name = "weight decay {0}")
    @ValueSource(doubles = {0, 0.01, 0.1})
    void fiveStepsMatchTheDoublePrecisionReference(double weightDecay) {
        RuleChecks.matchesReference(withWeightDecay.apply(weightDecay), kind, weightDecay);
    }

    @Test
    void stateIsLiveAndComplete() {
        RuleChecks.stateIsLiveAndComplete(() -> withWeightDecay.apply(0.01));
    }

    @Test
    void refusesBadArguments() {
        RuleChecks.refusesBadArguments(rule, constructor);
    }
}
