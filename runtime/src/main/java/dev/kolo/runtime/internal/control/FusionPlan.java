package dev.kolo.runtime.internal.control;

import dev.kolo.runtime.ReduceOp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which agreed ops run together: compatible allreduces (same dtype, reduce op and scales) are fused into one
 * buffer up to the fusion threshold (not Adasum's: each tensor combines with its own dot products), in the agreed order (an op that does not fit the open batch of its kind
 * starts the next one); every other op runs alone. Batches run in the order of their first op. The
 * coordinator and the ranks' own agreement rounds use this same rule. Linear in the number of ops.
 *
 * <p>An instance keeps its scratch arrays from plan to plan, so that a rank planning the batches of every
 * round allocates nothing once they have grown to its largest round; not thread-safe.
 */
public final class FusionPlan {
    /** The batch of each op. */
    private int[] batchOf = new int[16];
    /** Each batch's first op (whose dtype, reduce op and scales are the batch's kind) and its bytes so far. */
    private int[] lead = new int[16];
    private long[] bytes = new long[16];
    /** The open batch of each kind: an open-addressed table of batch + 1 (0: empty slot), keyed by kind. */
    private int[] open = new int[32];
    /** The ops grouped by batch: batch b holds {@code members[starts[b]] .. members[starts[b + 1] - 1]}. */
    private int[] members = new int[16];
    private int[] starts = new int[17];
    private int count;

    /**
     * Plans the batches of {@code specs}; read them with {@link #start}, {@link #end} and {@link #member}.
     *
     * @param specs the ops, in the order every rank agreed on
     * @return how many batches, ordered by their first op, each in the agreed order
     */
    public int plan(List<OpSpec> specs, long threshold) {
        int n = specs.size();
        ensure(n);
        int mask = open.length - 1;
        Arrays.fill(open, 0);
        count = 0;
        for (int i = 0; i < n; i++) {
            OpSpec s = specs.get(i);
            if (s.type != OpType.ALLREDUCE || threshold <= 0 || s.reduceOp == ReduceOp.ADASUM) {
                batchOf[i] = start(i, 0);
                continue;
            }
            int slot = kindHash(s) & mask;
            int b = -1;
            for (int at; (at = open[slot]) != 0; slot = (slot + 1) & mask) {
                if (sameKind(specs.get(lead[at - 1]), s)) {
                    b = at - 1;
                    break;
                }
            }
            if (b < 0 || bytes[b] + s.byteSize() > threshold) {
                b = start(i, 0);
                open[slot] = b + 1; // the kind's open batch is now this one
            }
            batchOf[i] = b;
            bytes[b] += s.byteSize();
        }
        Arrays.fill(starts, 0, count + 1, 0);
        for (int i = 0; i < n; i++) {
            starts[batchOf[i] + 1]++;
        }
        for (int b = 0; b < count; b++) {
            starts[b + 1] += starts[b];
        }
        // Fill each batch in op order; lead[] is free again and counts each batch's members placed so far.
        Arrays.fill(lead, 0, count, 0);
        for (int i = 0; i < n; i++) {
            int b = batchOf[i];
            members[starts[b] + lead[b]++] = i;
        }
        return count;
    }

    /** @return where batch {@code b}'s ops begin among the {@link #member}s */
    public int start(int b) {
        return starts[b];
    }

    /** @return where batch {@code b}'s ops end (exclusive) */
    public int end(int b) {
        return starts[b + 1];
    }

    /** @return the index into the planned specs of the k-th op, batch by batch */
    public int member(int k) {
        return members[k];
    }

    /**
     * @param specs the ops, in the order every rank agreed on
     * @return batches of indexes into {@code specs}, each in the agreed order, ordered by their first index
     */
    public static List<int[]> batches(List<OpSpec> specs, long threshold) {
        FusionPlan plan = new FusionPlan();
        int n = plan.plan(specs, threshold);
        List<int[]> result = new ArrayList<>(n);
        for (int b = 0; b < n; b++) {
            result.add(Arrays.copyOfRange(plan.members, plan.start(b), plan.end(b)));
        }
        return result;
    }

    private int start(int first, long size) {
        int b = count++;
        lead[b] = first;
        bytes[b] = size;
        return b;
    }

    private void ensure(int n) {
        if (batchOf.length < n) {
            int cap = Math.max(n, 2 * batchOf.length);
            batchOf = new int[cap];
            lead = new int[cap];
            bytes = new long[cap];
            members = new int[cap];
            starts = new int[cap + 1];
        }
        if (open.length < 2 * n) {
            open = new int[Integer.highestOneBit(Math.max(1, 2 * n - 1)) << 1];
        }
    }

    /** What fused allreduces must share: dtype, reduce op and scales. */
    private static boolean sameKind(OpSpec a, OpSpec b) {
        return a.dtype == b.dtype && a.reduceOp == b.reduceOp && Double.compare(a.prescale, b.prescale) == 0
                && Double.compare(a.postscale, b.postscale) == 0;
    }

    private static int kindHash(OpSpec s) {
        int h = s.dtype.ordinal();
        h = 31 * h + s.reduceOp.ordinal();
        h = 31 * h + Double.hashCode(s.prescale);
        h = 31 * h + Double.hashCode(s.postscale);
        return h ^ (h >>> 16);
    }
}
