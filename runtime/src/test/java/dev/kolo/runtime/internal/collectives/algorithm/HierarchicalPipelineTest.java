package dev.kolo.runtime.internal.collectives.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The order a pipelined hierarchical allreduce runs its host's ring in, and how it cuts a buffer: every segment is
 * reduce-scattered once and gathered once, its allgather after its reduce-scatter and after the next segment's, so
 * that the host's ring works on segment k + 1 while segment k crosses the hosts.
 */
@Timeout(10)
class HierarchicalPipelineTest {
    @Test
    void theHostsRingScattersAheadAndGathersBehind() {
        assertEquals(List.of("RS0", "RS1", "AG0", "AG1"), order(2));
        assertEquals(List.of("RS0", "RS1", "AG0", "RS2", "AG1", "RS3", "AG2", "AG3"), order(4));
        for (int s = 2; s <= HierarchicalAllreduce.MAX_SEGMENTS; s++) {
            List<String> order = order(s);
            assertEquals(2 * s, order.size(), "phases of " + s + " segments");
            for (int k = 0; k < s; k++) {
                int scatter = order.indexOf("RS" + k);
                int gather = order.indexOf("AG" + k);
                assertTrue(scatter >= 0 && gather > scatter, s + " segments: " + order);
                assertEquals(scatter, order.lastIndexOf("RS" + k), s + " segments: " + order);
                assertEquals(gather, order.lastIndexOf("AG" + k), s + " segments: " + order);
                if (k + 1 < s) {
                    assertTrue(order.indexOf("RS" + (k + 1)) < gather, s + " segments: " + order);
                }
            }
        }
    }

    @Test
    void aBufferIsPipelinedFromTwoSegmentsOfAMebibyteUpToSixteen() {
        assertEquals(0, HierarchicalAllreduce.segments(512 << 10));
        assertEquals(1, HierarchicalAllreduce.segments((2 << 20) - 1));
        assertEquals(2, HierarchicalAllreduce.segments(2 << 20));
        assertEquals(4, HierarchicalAllreduce.segments(4 << 20));
        assertEquals(16, HierarchicalAllreduce.segments(64 << 20));
        assertEquals(16, HierarchicalAllreduce.segments(Integer.MAX_VALUE));
    }

    private static List<String> order(int segments) {
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 2 * segments; i++) {
            int phase = HierarchicalAllreduce.hostPhase(i, segments);
            order.add((phase % 2 == 0 ? "RS" : "AG") + phase / 2);
        }
        return order;
    }
}
