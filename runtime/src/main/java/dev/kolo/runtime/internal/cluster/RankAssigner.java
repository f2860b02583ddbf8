package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.internal.control.WorkerInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the workers of a rendezvous round into contiguous ranks, the same way on any member: workers with
 * a rank hint first, by hint; then the others in join order (oldest cluster member first). Local rank and
 * local size count workers sharing a host, in rank order.
 */
final class RankAssigner {
    private RankAssigner() {
    }

    /**
     * @param joinOrder the round's workers, oldest cluster member first
     * @return the same workers with ranks set, in rank order
     */
    static List<WorkerInfo> assign(List<WorkerInfo> joinOrder) {
        List<WorkerInfo> ordered = new ArrayList<>(joinOrder);
        Map<String, Integer> age = new HashMap<>();
        for (int i = 0; i < joinOrder.size(); i++) {
            age.put(joinOrder.get(i).node(), i);
        }
        ordered.sort(Comparator
                .comparingInt((WorkerInfo w) -> w.rankHint() < 0 ? Integer.MAX_VALUE : w.rankHint())
                .thenComparingInt(w -> age.get(w.node())));

        Map<String, Integer> perHost = new HashMap<>();
        for (WorkerInfo w : ordered) {
            perHost.merge(w.host(), 1, Integer::sum);
        }
        Map<String, Integer> nextLocal = new HashMap<>();
        List<WorkerInfo> ranked = new ArrayList<>(ordered.size());
        for (int rank = 0; rank < ordered.size(); rank++) {
            WorkerInfo w = ordered.get(rank);
            int local = nextLocal.merge(w.host(), 1, Integer::sum) - 1;
            ranked.add(w.withRanks(rank, local, perHost.get(w.host())));
        }
        return List.copyOf(ranked);
    }
}
