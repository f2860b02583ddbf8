package dev.kolo.runtime.internal.negotiation;

import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Checks that every rank's request for one name agrees. Returns null when they do, else
 * {@code "mismatch:<message>"} or {@code "invalid:<message>"} naming the tensor, the attribute and which
 * ranks hold which value.
 */
final class Validation {
    private Validation() {
    }

    static String check(OpSpec[] specs, boolean[] joined) {
        OpSpec ref = null;
        for (OpSpec s : specs) {
            if (s != null) {
                ref = s;
                break;
            }
        }
        if (ref == null) {
            return "invalid:no rank submitted this op";
        }
        String what = ref.type.label() + " '" + ref.name + "'";
        String problem = differs(what, "op type", specs, s -> s.type.label());
        if (problem != null) {
            return "mismatch:" + problem;
        }
        List<String> checks = new ArrayList<>();
        checks.add(differs(what, "dtype", specs, s -> s.dtype.toString()));
        if (ref.type.perRankRows()) {
            checks.add(differs(what, "shape (beyond dim 0)", specs,
                    s -> s.shape.length == 0 ? "scalar" : Arrays.toString(Arrays.copyOfRange(s.shape, 1, s.shape.length))));
        } else {
            checks.add(differs(what, "shape", specs, s -> Arrays.toString(s.shape)));
        }
        if (ref.type == OpType.ALLREDUCE || ref.type == OpType.REDUCESCATTER) {
            checks.add(differs(what, "reduce op", specs, s -> s.reduceOp.toString()));
            checks.add(differs(what, "prescale", specs, s -> Double.toString(s.prescale)));
            checks.add(differs(what, "postscale", specs, s -> Double.toString(s.postscale)));
        }
        checks.add(differs(what, "group size", specs, s -> Integer.toString(s.groupSize)));
        if (ref.type == OpType.BROADCAST) {
            checks.add(differs(what, "root rank", specs, s -> Integer.toString(s.root)));
        }
        for (String c : checks) {
            if (c != null) {
                return "mismatch:" + c;
            }
        }
        String layout = layout(what, ref, specs);
        if (layout != null) {
            return "invalid:" + layout;
        }
        if (!ref.type.allowedWhileJoined()) {
            List<Integer> joinedRanks = new ArrayList<>();
            for (int r = 0; r < joined.length; r++) {
                if (joined[r]) {
                    joinedRanks.add(r);
                }
            }
            if (!joinedRanks.isEmpty()) {
                return "invalid:" + what + " cannot run while ranks " + joinedRanks + " have joined; only "
                        + "allreduce works after join()";
            }
        }
        return null;
    }

    /**
     * What the ranks agree on must also fit the job: a root that is a rank, splits that name every rank and
     * add up to each rank's rows. The API checks this on submit; a request from the wire may not be so kind.
     */
    private static String layout(String what, OpSpec ref, OpSpec[] specs) {
        int size = specs.length;
        if (ref.type == OpType.BROADCAST && ref.root >= size) {
            return what + ": root rank " + ref.root + " is not a rank of this job (0.." + (size - 1) + ")";
        }
        if (ref.type.perRankRows() && ref.shape.length == 0) {
            return what + " needs a tensor with at least one dimension";
        }
        if (ref.type == OpType.ALLTOALL) {
            for (int r = 0; r < size; r++) {
                OpSpec s = specs[r];
                if (s == null) {
                    continue;
                }
                if (s.splits.length != size) {
                    return what + ": rank " + r + " sent " + s.splits.length + " splits for " + size + " ranks";
                }
                long sum = 0;
                for (long n : s.splits) {
                    sum += n; // each split is at most MAX_TENSOR_BYTES and there are at most MAX_RANKS: no overflow
                }
                if (sum != s.rows()) {
                    return what + ": rank " + r + "'s splits add up to " + sum + " but it has " + s.rows() + " rows";
                }
            }
        }
        return null;
    }

    /** Groups ranks by the attribute's value; null when all ranks agree. */
    private static String differs(String what, String attribute, OpSpec[] specs, Function<OpSpec, String> value) {
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int r = 0; r < specs.length; r++) {
            if (specs[r] != null) {
                groups.computeIfAbsent(Objects.toString(value.apply(specs[r])), k -> new ArrayList<>()).add(r);
            }
        }
        if (groups.size() <= 1) {
            return null;
        }
        StringBuilder m = new StringBuilder(what).append(": ").append(attribute).append(" differs between ranks: ");
        String sep = "";
        for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
            List<Integer> ranks = g.getValue();
            m.append(sep).append(ranks.size() == 1 ? "rank " + ranks.get(0) : "ranks " + join(ranks))
                    .append(ranks.size() == 1 ? " has " : " have ").append(g.getKey());
            sep = "; ";
        }
        return m.append(". Submit the same ").append(attribute).append(" on every rank").toString();
    }

    private static String join(List<Integer> ranks) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < ranks.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(ranks.get(i));
        }
        return b.toString();
    }
}
