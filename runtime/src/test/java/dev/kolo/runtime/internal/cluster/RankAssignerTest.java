package dev.kolo.runtime.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.internal.control.WorkerInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

class RankAssignerTest {

    private static WorkerInfo w(String node, String host, int hint) {
        return new WorkerInfo(node, host, 1, 0, 1, hint, -1, -1, -1);
    }

    @Test
    void joinOrderWithoutHints() {
        List<WorkerInfo> r = RankAssigner.assign(List.of(w("a", "h1", -1), w("b", "h1", -1), w("c", "h2", -1)));
        assertEquals(List.of("a", "b", "c"), r.stream().map(WorkerInfo::node).toList());
        assertEquals(List.of(0, 1, 2), r.stream().map(WorkerInfo::rank).toList());
        assertEquals(List.of(0, 1, 0), r.stream().map(WorkerInfo::localRank).toList());
        assertEquals(List.of(2, 2, 1), r.stream().map(WorkerInfo::localSize).toList());
    }

    @Test
    void hintsFirstAndCompactedThenJoinOrder() {
        // Pod ordinals 3 and 0 survived; an unhinted worker joined first.
        List<WorkerInfo> r = RankAssigner.assign(List.of(w("x", "h", -1), w("p3", "h", 3), w("p0", "h", 0)));
        assertEquals(List.of("p0", "p3", "x"), r.stream().map(WorkerInfo::node).toList());
        assertEquals(List.of(0, 1, 2), r.stream().map(WorkerInfo::rank).toList());
    }

    @Test
    void sameInputSameRanksWhateverTheListInstance() {
        List<WorkerInfo> in = List.of(w("a", "h", 1), w("b", "h", 1), w("c", "h", -1));
        assertEquals(RankAssigner.assign(in), RankAssigner.assign(List.copyOf(in)));
        // Equal hints fall back to join order.
        assertEquals(List.of("a", "b", "c"), RankAssigner.assign(in).stream().map(WorkerInfo::node).toList());
    }
}
