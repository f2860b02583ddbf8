package dev.kolo.runtime.internal.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The reusable planner gives the batches of the fusion rule as first written (a map of open batches by kind),
 * plan after plan on one instance: its scratch arrays carry nothing from one plan into the next.
 */
class FusionPlanTest {

    @Test
    void fusesCompatibleAllreducesUpToTheThresholdInAgreedOrder() {
        List<OpSpec> specs = List.of(allreduce("a", DType.FLOAT32, ReduceOp.SUM, 1, 100),
                allreduce("b", DType.FLOAT64, ReduceOp.SUM, 1, 10), other("c"),
                allreduce("d", DType.FLOAT32, ReduceOp.SUM, 1, 100), allreduce("e", DType.FLOAT32, ReduceOp.SUM, 1, 100),
                allreduce("f", DType.FLOAT32, ReduceOp.SUM, 0.5, 1), allreduce("g", DType.FLOAT64, ReduceOp.SUM, 1, 10));
        List<int[]> batches = FusionPlan.batches(specs, 800);
        assertEquals(5, batches.size());
        assertArrayEquals(new int[] {0, 3}, batches.get(0)); // 400 + 400 bytes; e does not fit
        assertArrayEquals(new int[] {1, 6}, batches.get(1));
        assertArrayEquals(new int[] {2}, batches.get(2));
        assertArrayEquals(new int[] {4}, batches.get(3));
        assertArrayEquals(new int[] {5}, batches.get(4)); // another prescale: another kind
        assertEquals(specs.size(), FusionPlan.batches(specs, 0).size()); // no fusion at all
    }

    @Test
    void reusedPlannerMatchesTheMapRuleOnRandomRounds() {
        Random random = new Random(34);
        FusionPlan plan = new FusionPlan();
        DType[] dtypes = {DType.FLOAT32, DType.FLOAT64, DType.INT32};
        ReduceOp[] ops = {ReduceOp.SUM, ReduceOp.MAX};
        for (int round = 0; round < 2000; round++) {
            int n = random.nextInt(round % 50 == 0 ? 300 : 20);
            List<OpSpec> specs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (random.nextInt(8) == 0) {
                    specs.add(other("o" + i));
                } else {
                    specs.add(allreduce("t" + i, dtypes[random.nextInt(dtypes.length)], ops[random.nextInt(ops.length)],
                            random.nextInt(3) == 0 ? 0.5 : 1.0, 1 + random.nextInt(300)));
                }
            }
            long threshold = random.nextInt(6) == 0 ? 0 : 1 + random.nextInt(4000);
            List<int[]> expected = mapRule(specs, threshold);
            int batches = plan.plan(specs, threshold);
            assertEquals(expected.size(), batches, "round " + round);
            for (int b = 0; b < batches; b++) {
                int[] got = new int[plan.end(b) - plan.start(b)];
                for (int k = 0; k < got.length; k++) {
                    got[k] = plan.member(plan.start(b) + k);
                }
                assertArrayEquals(expected.get(b), got, "round " + round + ", batch " + b);
            }
        }
    }

    /** The rule as it was first written: open batches in a map keyed by kind. */
    private static List<int[]> mapRule(List<OpSpec> specs, long threshold) {
        List<List<Integer>> batches = new ArrayList<>();
        Map<List<Object>, Open> open = new HashMap<>();
        for (int i = 0; i < specs.size(); i++) {
            OpSpec s = specs.get(i);
            if (s.type != OpType.ALLREDUCE || threshold <= 0) {
                batches.add(List.of(i));
                continue;
            }
            List<Object> key = List.of(s.dtype, s.reduceOp, s.prescale, s.postscale);
            Open batch = open.get(key);
            if (batch == null || batch.bytes + s.byteSize() > threshold) {
                batch = new Open();
                open.put(key, batch);
                batches.add(batch.members);
            }
            batch.members.add(i);
            batch.bytes += s.byteSize();
        }
        List<int[]> result = new ArrayList<>();
        for (List<Integer> b : batches) {
            result.add(b.stream().mapToInt(Integer::intValue).toArray());
        }
        return result;
    }

    private static final class Open {
        final List<Integer> members = new ArrayList<>();
        long bytes;
    }

    private static OpSpec allreduce(String name, DType dtype, ReduceOp op, double prescale, long elements) {
        return new OpSpec(name, OpType.ALLREDUCE, dtype, new long[] {elements}, op, prescale, 1.0, 0, null);
    }

    private static OpSpec other(String name) {
        return new OpSpec(name, OpType.BROADCAST, DType.FLOAT32, new long[] {4}, ReduceOp.SUM, 1, 1, 0, null);
    }
}
