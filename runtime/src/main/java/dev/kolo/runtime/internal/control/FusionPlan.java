package dev.kolo.runtime.internal.control;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which agreed ops run together: compatible allreduces (same dtype, reduce op and scales) are fused into one
 * buffer up to the fusion threshold, in the agreed order (an op that does not fit the open batch of its kind
 * starts the next one); every other op runs alone. Batches run in the order of their first op. The
 * coordinator and the ranks' own agreement rounds use this same rule. Linear in the number of ops.
 */
public final class FusionPlan {
    private FusionPlan() {
    }

    /**
     * @param specs the ops, in the order every rank agreed on
     * @return batches of indexes into {@code specs}, each in the agreed order, ordered by their first index
     */
    public static List<int[]> batches(List<OpSpec> specs, long threshold) {
        List<List<Integer>> batches = new ArrayList<>();
        Map<Key, Open> open = new HashMap<>();
        for (int i = 0; i < specs.size(); i++) {
            OpSpec s = specs.get(i);
            if (s.type != OpType.ALLREDUCE || threshold <= 0) {
                batches.add(List.of(i));
                continue;
            }
            Key key = new Key(s.dtype, s.reduceOp, s.prescale, s.postscale);
            Open batch = open.get(key);
            if (batch == null || batch.bytes + s.byteSize() > threshold) {
                batch = new Open(new ArrayList<>());
                open.put(key, batch);
                batches.add(batch.members);
            }
            batch.members.add(i);
            batch.bytes += s.byteSize();
        }
        List<int[]> result = new ArrayList<>(batches.size());
        for (List<Integer> b : batches) {
            result.add(b.stream().mapToInt(Integer::intValue).toArray());
        }
        return result;
    }

    /** What fused allreduces must share. */
    private record Key(DType dtype, ReduceOp op, double prescale, double postscale) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && dtype == k.dtype && op == k.op && Double.compare(prescale, k.prescale) == 0
                    && Double.compare(postscale, k.postscale) == 0;
        }

        @Override
        public int hashCode() {
            return Objects.hash(dtype, op, Double.hashCode(prescale), Double.hashCode(postscale));
        }
    }

    private static final class Open {
        final List<Integer> members;
        long bytes;

        Open(List<Integer> members) {
            this.members = members;
        }
    }
}
