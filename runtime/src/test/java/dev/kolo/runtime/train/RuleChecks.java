package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.testing.DoubleAdam;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** Checks shared by the tests of Adam, AdamW and Lamb: the double reference, state, constructor arguments. */
final class RuleChecks {
    static final double BETA1 = 0.9;
    static final double BETA2 = 0.999;
    static final double EPSILON = 1e-8;
    /** Odd sizes: a scalar, a short vector, one long enough for norms and any unrolling to matter. */
    private static final int[] SIZES = {1, 7, 1000};
    private static final int STEPS = 5;
    /** Sits out steps 2 and 3, so it ends at its own step count 3 while the others reach 5. */
    private static final int LAGGARD = 1;

    /**
     * Float against double: each float operation rounds by at most 6e-8 relative, a handful per element per
     * step, so 1e-6 relative leaves room for five steps yet fails on any formula slip (a missing bias correction
     * changes a step by a factor of 3 to 30). The absolute floor covers values that cancel to near zero (a weight
     * or a first moment crossing zero), whose error is the rounding of their earlier, larger magnitude (about
     * 1e-7 at magnitude 1) rather than a fraction of their final value.
     */
    private static final double RELATIVE = 1e-6;
    private static final double ABSOLUTE = 2e-7;

    private RuleChecks() {
    }

    /** The parameters "p0", "p1", "p2" of {@link #SIZES}, weights in [-1, 1). */
    static List<Parameter> parameters() {
        SplittableRandom random = new SplittableRandom(42);
        List<Parameter> ps = new ArrayList<>();
        for (int j = 0; j < SIZES.length; j++) {
            float[] w = new float[SIZES[j]];
            for (int i = 0; i < w.length; i++) {
                w[i] = (float) (2 * random.nextDouble() - 1);
            }
            ps.add(Parameter.of("p" + j, w, new float[w.length]));
        }
        return ps;
    }

    /** Fixed pseudo-random gradient for {@code step}: both signs, magnitudes from 1e-4 to 10. */
    static void fillGradient(Parameter p, int step) {
        SplittableRandom random = new SplittableRandom(1000L * step + p.name().hashCode());
        float[] g = p.gradient();
        for (int i = 0; i < g.length; i++) {
            double magnitude = Math.pow(10, -4 + 5 * random.nextDouble());
            g[i] = (float) (random.nextBoolean() ? magnitude : -magnitude);
        }
    }

    /**
     * Five steps of {@code rule} (a learning rate growing per step) on parameters of sizes 1, 7 and 1000
     * against {@link DoubleAdam}: weights, both moments and each parameter's own step count.
     */
    static void matchesReference(UpdateRule rule, DoubleAdam.Kind kind, double weightDecay) {
        List<Parameter> ps = parameters();
        List<DoubleAdam> refs = new ArrayList<>();
        for (Parameter p : ps) {
            refs.add(new DoubleAdam(kind, BETA1, BETA2, EPSILON, weightDecay, p.values()));
        }
        for (int step = 1; step <= STEPS; step++) {
            double lr = 0.01 * step;
            for (int j = 0; j < ps.size(); j++) {
                if (j == LAGGARD && (step == 2 || step == 3)) {
                    continue;
                }
                Parameter p = ps.get(j);
                fillGradient(p, step);
                rule.apply(p, lr);
                refs.get(j).step(p.gradient(), lr);
            }
        }
        for (int j = 0; j < ps.size(); j++) {
            Parameter p = ps.get(j);
            DoubleAdam ref = refs.get(j);
            List<StateEntry> state = state(rule, p);
            assertClose(ref.w, p.values(), p + " weights");
            assertClose(ref.m, (float[]) state.get(0).live(), p + " first moment");
            assertClose(ref.v, (float[]) state.get(1).live(), p + " second moment");
            assertEquals(j == LAGGARD ? 3 : STEPS, ref.t);
            assertEquals(ref.t, ((long[]) state.get(2).live())[0], p + " counts its own steps");
        }
    }

    static void assertClose(double[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < actual.length; i++) {
            double error = Math.abs(actual[i] - expected[i]);
            if (!(error <= RELATIVE * Math.abs(expected[i]) + ABSOLUTE)) {
                fail(what + "[" + i + "]: expected " + expected[i] + " but got " + actual[i] + " (off by " + error
                        + ")");
            }
        }
    }

    /**
     * The state of an Adam-family rule is {@code .m}, {@code .v} and {@code .step}, created before the first step,
     * handed over live, and all that the next step depends on: copied from one rule into another along with the
     * weights, it makes their next steps equal bit for bit; changed, it changes the next step.
     */
    static void stateIsLiveAndComplete(java.util.function.Supplier<UpdateRule> make) {
        UpdateRule a = make.get();
        UpdateRule b = make.get();
        Parameter pa = Parameter.of("layer.w", new float[] {0.5f, -0.25f, 1, 0, 2, -3}, new float[6], 2, 3);
        Parameter pb = Parameter.of("layer.w", pa.values().clone(), new float[6], 2, 3);
        List<StateEntry> sa = state(a, pa);
        assertEquals(List.of("layer.w.m", "layer.w.v", "layer.w.step"), sa.stream().map(e -> e.name()).toList());
        assertArrayEquals(new long[] {2, 3}, sa.get(0).shape());
        assertArrayEquals(new long[] {2, 3}, sa.get(1).shape());
        assertArrayEquals(new long[] {1}, sa.get(2).shape());
        assertArrayEquals(new float[6], (float[]) sa.get(0).live(), "created (zero) before the first step");
        assertArrayEquals(new long[] {0}, (long[]) sa.get(2).live());
        List<StateEntry> sb = state(b, pb);

        for (int step = 1; step <= 2; step++) {
            step(a, pa, step);
            step(b, pb, step);
        }
        step(a, pa, 3); // a runs ahead: its weights and state differ from b's now
        List<StateEntry> again = state(a, pa);
        for (int k = 0; k < sa.size(); k++) {
            assertSame(sa.get(k).live(), again.get(k).live(), sa.get(k).name() + " is handed over live, not copied");
        }
        assertArrayEquals(new long[] {3}, (long[]) sa.get(2).live());
        assertArrayEquals(new long[] {2}, (long[]) sb.get(2).live());

        copy(sb, sa);
        System.arraycopy(pb.values(), 0, pa.values(), 0, 6);
        step(a, pa, 7);
        step(b, pb, 7);
        assertArrayEquals(pb.values(), pa.values(), "same state, same gradient: the same step");
        assertArrayEquals(new long[] {3}, (long[]) sa.get(2).live());

        for (int k = 0; k < sa.size(); k++) {
            copy(sb, sa);
            System.arraycopy(pb.values(), 0, pa.values(), 0, 6);
            if (sa.get(k).live() instanceof float[] f) {
                Arrays.fill(f, 0.5f);
            } else {
                ((long[]) sa.get(k).live())[0] = 1;
            }
            step(a, pa, 8);
            step(b, pb, 8);
            assertFalse(Arrays.equals(pb.values(), pa.values()), "writing " + sa.get(k).name() + " changes the step");
            System.arraycopy(pb.values(), 0, pa.values(), 0, 6);
        }
    }

    private static void step(UpdateRule rule, Parameter p, int step) {
        fillGradient(p, step);
        rule.apply(p, 0.05);
    }

    private static void copy(List<StateEntry> from, List<StateEntry> to) {
        for (int k = 0; k < from.size(); k++) {
            Object src = from.get(k).live();
            System.arraycopy(src, 0, to.get(k).live(), 0, java.lang.reflect.Array.getLength(src));
        }
    }

    /** A rule's four-argument constructor: beta1, beta2, epsilon, weight decay. */
    interface Factory {
        UpdateRule make(double beta1, double beta2, double epsilon, double weightDecay);
    }

    /** Each bad argument is refused with a message naming the rule, the argument, its value and the valid range. */
    static void refusesBadArguments(String rule, Factory make) {
        refuses(rule, "beta1", "[0, 1)", "1.0", () -> make.make(1, BETA2, EPSILON, 0));
        refuses(rule, "beta1", "[0, 1)", "-0.1", () -> make.make(-0.1, BETA2, EPSILON, 0));
        refuses(rule, "beta2", "[0, 1)", "1.5", () -> make.make(BETA1, 1.5, EPSILON, 0));
        refuses(rule, "beta2", "[0, 1)", "NaN", () -> make.make(BETA1, Double.NaN, EPSILON, 0));
        refuses(rule, "epsilon", "> 0", "0.0", () -> make.make(BETA1, BETA2, 0, 0));
        refuses(rule, "epsilon", "> 0", "Infinity", () -> make.make(BETA1, BETA2, Double.POSITIVE_INFINITY, 0));
        refuses(rule, "weightDecay", ">= 0", "-0.01", () -> make.make(BETA1, BETA2, EPSILON, -0.01));
        refuses(rule, "weightDecay", ">= 0", "NaN", () -> make.make(BETA1, BETA2, EPSILON, Double.NaN));
        make.make(0, 0, 1e-30, 0); // both ends of the ranges are accepted
    }

    private static void refuses(String rule, String argument, String range, String value, Runnable make) {
        String message = assertThrows(IllegalArgumentException.class, make::run).getMessage();
        for (String part : List.of(rule, argument, range, "(got " + value + ")")) {
            assertTrue(message.contains(part), "'" + message + "' should contain '" + part + "'");
        }
    }

    /** One array of state as handed to a {@link UpdateRule.StateSink}. */
    record StateEntry(String name, Object live, long[] shape) {
    }

    static List<StateEntry> state(UpdateRule rule, Parameter p) {
        List<StateEntry> entries = new ArrayList<>();
        rule.state(p, new UpdateRule.StateSink() {
            @Override
            public void floats(String name, float[] live, long[] shape) {
                entries.add(new StateEntry(name, live, shape));
            }

            @Override
            public void longs(String name, long[] live, long[] shape) {
                entries.add(new StateEntry(name, live, shape));
            }
        });
        return entries;
    }
}
