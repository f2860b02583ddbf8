package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The state of SGD and of rules that keep none. */
class SgdStateTest {
    private final Parameter p = Parameter.of("fc.w", new float[6], new float[6], 3, 2);

    /** The name checkpoints already hold and DJL's DistributedTrainer registered before state() existed. */
    @Test
    void momentumIsHandedOverAsVelocity() {
        Sgd sgd = new Sgd(0.9, 0);
        List<RuleChecks.StateEntry> state = RuleChecks.state(sgd, p);
        assertEquals(1, state.size());
        assertEquals("fc.w.velocity", state.get(0).name());
        assertSame(sgd.velocity(p), state.get(0).live());
        assertArrayEquals(new long[] {3, 2}, state.get(0).shape());
    }

    @Test
    void plainSgdAndLambdasKeepNone() {
        assertEquals(List.of(), RuleChecks.state(new Sgd(0, 0.1), p));
        UpdateRule lambda = (q, lr) -> { };
        assertEquals(List.of(), RuleChecks.state(lambda, p));
    }
}
