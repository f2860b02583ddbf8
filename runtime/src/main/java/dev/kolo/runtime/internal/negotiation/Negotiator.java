package dev.kolo.runtime.internal.negotiation;

import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.ErrorKind;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import dev.kolo.runtime.internal.control.FusionPlan;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.SetScope;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator's negotiation state for one generation (or one process set of it: its ranks are then the
 * set's ranks, and its errors say so), free of any messaging so it can be tested
 * alone. Ranks' requests are collected per tensor name; a name becomes ready when every rank has asked
 * for it (a joined rank counts for allreduce); ready names are validated, fused and numbered into
 * {@link OpResponse}s that every rank executes in the same order.
 */
public final class Negotiator {
    private final int size;
    private final long generation;
    private final SetScope scope;
    private final long fusionThreshold;
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    private final List<Pending> ready = new ArrayList<>();
    /** Members of groups ready on every rank, held until the whole group is (by group name). */
    private final Map<String, List<Pending>> groups = new LinkedHashMap<>();
    private final List<ControlMessage> out = new ArrayList<>();
    private final boolean[] joined;
    private int joinedCount;
    private int lastJoined = -1;
    private long nextSequence;
    /**
     * The sequence of the last response that answered each name, and of the last join completion: a request a
     * rank sent before it held that response (its {@code received} is not past it) is a re-sent copy of one the
     * coordinator already counted, not a new request under the same name.
     */
    private final Map<String, Long> answeredIn = new java.util.HashMap<>();
    /**
     * The entries of {@link #answeredIn} in the order they were answered, pruned from the oldest once every rank
     * holds their response: a rank's requests arrive in the order it sent them, so once it has sent one that
     * holds a response it can send no copy of a request that response answered. A program that names tensors
     * by step therefore keeps only the names answered since the ranks' last requests, not every name.
     */
    private final java.util.ArrayDeque<Answered> answerOrder = new java.util.ArrayDeque<>();
    /** Per rank, the most responses it reported holding (in a request or a join). */
    private final long[] held;
    private long lastJoinResponse = -1;

    private record Answered(String name, long sequence) {
    }

    public Negotiator(int size, long generation, long fusionThreshold) {
        this(size, generation, SetScope.GLOBAL, fusionThreshold);
    }

    /** @param scope the process set negotiated here; {@code size} is its number of ranks */
    public Negotiator(int size, long generation, SetScope scope, long fusionThreshold) {
        this.size = size;
        this.generation = generation;
        this.scope = scope;
        this.fusionThreshold = fusionThreshold;
        this.joined = new boolean[size];
        this.held = new long[size];
    }

    /** One rank's request for a named collective, never re-sent (tests). */
    public void onRequest(int rank, OpSpec spec, long nowNanos) {
        onRequest(rank, spec, nowNanos, Long.MAX_VALUE);
    }

    /**
     * One rank's request for a named collective, sent when the rank held {@code received} responses.
     *
     * @return false if it is a copy of a request already counted (a rank re-sends until it holds the answer)
     */
    public boolean onRequest(int rank, OpSpec spec, long nowNanos, long received) {
        if (rank < 0 || rank >= size) {
            return false; // not a rank of this generation: dropped like a stale message
        }
        Long answered = answeredIn.get(spec.name);
        if (answered != null && received <= answered) {
            return false; // answered already; the answer had not reached the rank when it sent this copy
        }
        held(rank, received);
        Pending p = pending.computeIfAbsent(spec.name, n -> new Pending(spec.name, size, nowNanos));
        if (p.specs[rank] != null) {
            return false;
        }
        p.specs[rank] = spec;
        p.count++;
        checkReady(p);
        return true;
    }

    /** A rank joins, never re-sent (tests). */
    public void onJoin(int rank) {
        onJoin(rank, Long.MAX_VALUE);
    }

    /**
     * A rank joins: it has no more work and contributes zeros to allreduces from now on.
     *
     * @return false if it is a copy of a join already counted
     */
    public boolean onJoin(int rank, long received) {
        if (rank < 0 || rank >= size || joined[rank] || received <= lastJoinResponse) {
            return false;
        }
        held(rank, received);
        joined[rank] = true;
        joinedCount++;
        lastJoined = rank;
        for (Pending p : new ArrayList<>(pending.values())) {
            checkReady(p);
        }
        if (joinedCount == size) {
            lastJoinResponse = nextSequence;
            out.add(new JoinResponse(generation, scope.id(), nextSequence++, lastJoined));
            java.util.Arrays.fill(joined, false);
            joinedCount = 0;
        }
        return true;
    }

    private void checkReady(Pending p) {
        int present = p.count;
        for (int r = 0; r < size; r++) {
            if (joined[r] && p.specs[r] == null) {
                present++;
            }
        }
        if (present == size && pending.remove(p.name) != null) {
            OpSpec spec = p.specs[firstRank(p)];
            if (spec.groupSize < 2) {
                ready.add(p);
                return;
            }
            List<Pending> members = groups.computeIfAbsent(spec.groupName(), g -> new ArrayList<>());
            members.add(p);
            if (members.size() == spec.groupSize) {
                groups.remove(spec.groupName());
                members.sort(java.util.Comparator.comparingInt(m -> OpSpec.groupIndex(m.name)));
                ready.addAll(members); // consecutive: drain fuses them
            }
        }
    }

    /**
     * Rank {@code rank} holds {@code received} responses: the answers every rank holds are forgotten. A joined
     * rank sends no request until the join completes (and none older than its join after it), so it holds back
     * nothing.
     */
    private void held(int rank, long received) {
        if (received <= held[rank]) {
            return;
        }
        held[rank] = received;
        long everywhere = Long.MAX_VALUE;
        for (int r = 0; r < size; r++) {
            if (!joined[r] && r != rank) {
                everywhere = Math.min(everywhere, held[r]);
            }
        }
        everywhere = Math.min(everywhere, received);
        while (!answerOrder.isEmpty() && answerOrder.peekFirst().sequence() < everywhere) {
            Answered a = answerOrder.removeFirst();
            answeredIn.remove(a.name(), a.sequence());
        }
    }

    private void answered(String name, long sequence) {
        answeredIn.put(name, sequence);
        answerOrder.addLast(new Answered(name, sequence));
    }

    /** @return how many names the negotiator remembers as answered (for tests: it must not grow with every name) */
    public int answeredCount() {
        return answeredIn.size();
    }

    /** @return responses (and join completions) ready to send, in the order every rank must run them */
    public List<ControlMessage> drain() {
        if (!ready.isEmpty()) {
            List<Pending> valid = new ArrayList<>(ready.size());
            List<OpSpec> specs = new ArrayList<>(ready.size());
            for (Pending p : ready) {
                String problem = Validation.check(p.specs, joined);
                if (problem != null) {
                    out.add(error(p.specs[firstRank(p)].type, List.of(p.name),
                            problem.startsWith("invalid:") ? ErrorKind.INVALID : ErrorKind.MISMATCH,
                            problem.substring(problem.indexOf(':') + 1)));
                } else {
                    valid.add(p);
                    specs.add(p.specs[firstRank(p)]);
                }
            }
            ready.clear();
            for (int[] indexes : FusionPlan.batches(specs, fusionThreshold)) {
                List<Pending> batch = new ArrayList<>(indexes.length);
                for (int i : indexes) {
                    batch.add(valid.get(i));
                }
                out.add(respond(specs.get(indexes[0]).type, batch));
            }
        }
        List<ControlMessage> result = List.copyOf(out);
        out.clear();
        return result;
    }

    private OpResponse respond(OpType type, List<Pending> batch) {
        List<ResponseEntry> entries = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            OpSpec spec = p.specs[firstRank(p)];
            boolean cacheable = spec.cacheable() && allEqual(p.specs);
            entries.add(new ResponseEntry(spec.name, cacheable, spec, perRank(spec.type, p.specs)));
            answered(spec.name, nextSequence);
        }
        return new OpResponse(generation, scope.id(), nextSequence++, type, List.copyOf(entries), ErrorKind.NONE, "");
    }


    private OpResponse error(OpType type, List<String> names, ErrorKind kind, String message) {
        List<ResponseEntry> entries = new ArrayList<>();
        for (String n : names) {
            entries.add(new ResponseEntry(n, false, null, new long[0]));
            answered(n, nextSequence);
        }
        String scoped = scope.global() ? message
                : message + " (in " + scope.describe() + "; the ranks named are the set's)";
        return new OpResponse(generation, scope.id(), nextSequence++, type, entries, kind, scoped);
    }

    /** Rows per rank for allgather, the splits matrix for alltoall, nothing otherwise. */
    private long[] perRank(OpType type, OpSpec[] specs) {
        if (type == OpType.ALLGATHER) {
            long[] rows = new long[size];
            for (int r = 0; r < size; r++) {
                rows[r] = specs[r].rows();
            }
            return rows;
        }
        if (type == OpType.ALLTOALL) {
            long[] matrix = new long[size * size];
            for (int r = 0; r < size; r++) {
                System.arraycopy(specs[r].splits, 0, matrix, r * size, size);
            }
            return matrix;
        }
        return new long[0];
    }

    private boolean allEqual(OpSpec[] specs) {
        OpSpec first = null;
        for (OpSpec s : specs) {
            if (s == null) {
                continue; // a joined rank
            }
            if (first == null) {
                first = s;
            } else if (!first.equals(s)) {
                return false;
            }
        }
        return true;
    }

    private static int firstRank(Pending p) {
        for (int r = 0; r < p.specs.length; r++) {
            if (p.specs[r] != null) {
                return r;
            }
        }
        throw new IllegalStateException("ready op '" + p.name + "' has no request");
    }

    /** Names some ranks asked for and others not, for longer than {@code afterNanos}. */
    public List<Stall> stalls(long nowNanos, long afterNanos) {
        List<Stall> stalls = new ArrayList<>();
        for (Pending p : pending.values()) {
            if (nowNanos - p.firstNanos >= afterNanos) {
                List<Integer> missing = new ArrayList<>();
                for (int r = 0; r < size; r++) {
                    if (p.specs[r] == null && !joined[r]) {
                        missing.add(r);
                    }
                }
                stalls.add(new Stall(p.name, missing, (nowNanos - p.firstNanos) / 1_000_000_000.0));
            }
        }
        return stalls;
    }

    /** Fails, on every rank, the names stalled longer than {@code afterNanos}. */
    public void failStalled(long nowNanos, long afterNanos) {
        for (Iterator<Pending> it = pending.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (nowNanos - p.firstNanos >= afterNanos) {
                it.remove();
                List<Integer> missing = new ArrayList<>();
                for (int r = 0; r < size; r++) {
                    if (p.specs[r] == null && !joined[r]) {
                        missing.add(r);
                    }
                }
                OpSpec spec = p.specs[firstRank(p)];
                out.add(error(spec.type, List.of(p.name), ErrorKind.STALLED, spec.type.label() + " '" + p.name
                        + "' stalled: ranks " + missing + " did not submit it within "
                        + (afterNanos / 1_000_000_000L) + " s" + STALL_FIX));
            }
        }
        // Members ready everywhere whose group waits too long for the rest fail with it.
        for (Iterator<List<Pending>> it = groups.values().iterator(); it.hasNext(); ) {
            List<Pending> members = it.next();
            Pending first = members.get(0);
            if (nowNanos - first.firstNanos >= afterNanos) {
                it.remove();
                OpSpec spec = first.specs[firstRank(first)];
                List<String> names = new ArrayList<>();
                members.forEach(m -> names.add(m.name));
                out.add(error(spec.type, names, ErrorKind.STALLED, "group '" + spec.groupName() + "' stalled: only "
                        + members.size() + " of its " + spec.groupSize + " tensors were submitted by every rank within "
                        + (afterNanos / 1_000_000_000L) + " s" + STALL_FIX));
            }
        }
    }

    private static final String STALL_FIX = " (KOLO_STALL_SHUTDOWN): every rank must submit the same tensors; if one "
            + "legitimately takes longer (evaluation, a checkpoint), raise KOLO_STALL_SHUTDOWN (0 waits for ever)";

    public int pendingCount() {
        return pending.size();
    }

    /** A name some ranks are waiting on. */
    public record Stall(String name, List<Integer> missingRanks, double seconds) {
    }

    /** Requests collected so far for one name. */
    private static final class Pending {
        final String name;
        final OpSpec[] specs;
        final long firstNanos;
        int count;

        Pending(String name, int size, long firstNanos) {
            this.name = name;
            this.specs = new OpSpec[size];
            this.firstNanos = firstNanos;
        }
    }
}
