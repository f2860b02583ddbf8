package dev.kolo.runtime.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Who spins and who yields while waiting for peers, from the host's ranks and cores. */
class PollingRuleTest {
    @Test
    void ranksThatOutnumberTheCoresYieldOnEveryThread() {
        assertEquals(new PollingRule(true, false), PollingRule.of(4, 2));
        assertEquals(new PollingRule(true, false), PollingRule.of(3, 2));
    }

    @Test
    void ranksThatFillTheCoresSpinInTheirCallersAndYieldInTheCollectiveThread() {
        assertEquals(new PollingRule(false, true), PollingRule.of(2, 2));
        assertEquals(new PollingRule(false, true), PollingRule.of(1, 1));
    }

    @Test
    void ranksWithCoresToSpareSpinEverywhere() {
        assertEquals(new PollingRule(false, false), PollingRule.of(1, 2));
        assertEquals(new PollingRule(false, false), PollingRule.of(2, 8));
    }
}
