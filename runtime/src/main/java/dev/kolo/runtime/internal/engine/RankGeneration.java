package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.CollectiveMismatchException;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.control.ControlChecks;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.JoinRequest;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpRequest;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import dev.kolo.runtime.internal.control.FusionPlan;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.dataplane.DataPlane;
import dev.kolo.runtime.internal.dataplane.DataPlaneFactory;
import dev.kolo.runtime.internal.dataplane.DataPlanes;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.observability.Timeline;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One generation as this rank runs it: what the rank has submitted, how every rank agrees on what runs, and
 * the execution, in the same order on every rank.
 *
 * <p><b>Two paths to agreement.</b> A tensor whose spec is in the generation's {@link TensorCache} waits for
 * an <i>agreement round</i>: every rank sends every other rank, over the data plane, the set of cache ids it
 * has ready (and, for small allreduces, their data); the ids ready on every rank run at once, in id order,
 * fused where they fit, and small ones are complete with the round itself. Anything else (a new tensor, a
 * changed spec, a rank that has joined, an op that is not cacheable) goes to the coordinator over the event
 * bus, which validates it against every rank's request and answers with numbered responses; a rank executes
 * response s only in a round where every rank reported holding it, so both paths interleave identically on
 * every rank. Every change of the cache happens during a round, at the same point on every rank, so the caches
 * stay identical and a rank never sends an id the others do not know: an entry a rank must drop (its name
 * resubmitted with another spec, or its tensor waiting too long) is marked invalid in a round, every rank drops
 * it, and every rank sends its waiting op of that id to the coordinator, whose validation and stall inspector
 * then see it as any other.
 *
 * <p>State is guarded by the engine lock of {@link CollectiveClient}: whichever thread drives (the collective
 * thread, or a caller waiting for its own op) runs {@link #admit}, {@link #round} and the rest.
 */
final class RankGeneration {
    private static final Logger LOG = LoggerFactory.getLogger(RankGeneration.class);
    /**
     * Longest a cached tensor waits in agreement rounds before it goes to the coordinator, whose stall
     * inspector then warns about it and fails it; a tenth of the stall warning time, so that the inspector's
     * clock is not late by much, and at most this.
     */
    static final long MAX_DEMOTE_AFTER_NANOS = 5_000_000_000L;

    final long generation;
    final int rank;
    final int size;
    final String coordinatorNode;
    final Assignment assignment;
    final WorkerInfo self;
    volatile KoloException abortCause;
    volatile DataPlane dataPlane;

    private final ControlChannel node;
    private final Observability observability;
    private final Completion completion;
    private final TensorCache cache;
    private final long fusionThreshold;
    private final long demoteAfterNanos;
    /**
     * Longest a coordinator response may sit on this rank while another rank reports not holding it: the same
     * bound as a data-plane op without progress (the control plane lost a message, the generation ends).
     */
    private final long responseAgreementNanos;
    private CollectiveOps ops;
    private EagerReduction eager;

    /** Tensors waiting in agreement rounds, by cache id, in submission order (the oldest first). */
    private final LinkedHashMap<Integer, PendingOp> waiting = new LinkedHashMap<>();
    private long[] ready = new long[1];
    private final BitSet invalid = new BitSet();
    /** Coordinator responses held, by sequence, and when each arrived. */
    private final TreeMap<Long, ControlMessage> responses = new TreeMap<>();
    private final Map<Long, Long> arrivals = new HashMap<>();
    private long received;
    private long executed;
    private boolean joined;
    private CompletableFuture<Integer> joinResult;
    /** Some rank had joined in the last round: every tensor goes to the coordinator meanwhile. */
    private boolean anyJoined;
    /** Something this rank must tell the others in a round. */
    private boolean dirty;
    /**
     * How long a request to the coordinator goes unanswered before this rank sends it again. The event bus
     * delivers at most once (what is in flight while a member reconnects is lost): without a resend, a lost
     * request or response would stall its tensor until the stall inspector fails it. The coordinator counts a
     * copy once and answers it by sending again the responses this rank lacks; a request that merely waits for
     * a slow peer costs one small message per interval.
     */
    static final long RESEND_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /** Requests sent to the coordinator and not answered yet, by tensor name: re-sent every {@link #RESEND_NANOS}. */
    private final Map<String, Unanswered> unanswered = new LinkedHashMap<>();
    /** When this rank's join was last sent, while its completion has not arrived; -1 when none. */
    private long joinSentNanos = -1;
    /** When the oldest unanswered request is due to be sent again; Long.MAX_VALUE when none. */
    private long resendAt = Long.MAX_VALUE;
    /** Tensors failed by the stall inspector while this rank had not submitted them: its late submit fails. */
    private final Map<String, KoloException> stalled = new HashMap<>();

    // Scratch of a round, reused.
    private long[] agreedBits = new long[1];
    private long[] invalidBits = new long[1];
    private int[] agreed = new int[16];
    private int[][] eagerOffsets;
    private final ByteBuffer[] vectors;
    private final int[] vectorOffsets;
    private final List<Integer> removed = new ArrayList<>();

    /** How a finished op reaches its caller, and how a generation ends: {@link CollectiveClient}. */
    interface Completion {
        void finish(PendingOp op, Tensor result, Throwable error);

        void abort(RankGeneration g, KoloException cause);

        PendingOp pending(String name);
    }

    RankGeneration(Assignment a, WorkerInfo self, ControlChannel node, Observability observability,
                   Completion completion) {
        this.assignment = a;
        this.self = self;
        this.node = node;
        this.observability = observability;
        this.completion = completion;
        this.generation = a.generation();
        this.rank = self.rank();
        this.size = a.workers().size();
        this.coordinatorNode = a.coordinatorNode();
        KoloConfig config = node.config();
        this.cache = new TensorCache(config.cacheCapacity());
        this.fusionThreshold = config.fusionThreshold();
        this.demoteAfterNanos = Math.min(MAX_DEMOTE_AFTER_NANOS, config.stallWarning().toNanos() / 10);
        this.responseAgreementNanos = DataPlanes.progressTimeout(config).toNanos();
        this.vectors = new ByteBuffer[size];
        this.vectorOffsets = new int[size];
        this.eagerOffsets = new int[size][16];
    }

    /** Connects this generation's data plane (blocks until the ring is up or fails). */
    void open(DataPlaneFactory factory, dev.kolo.runtime.internal.ring.Reducer reducer) {
        dataPlane = factory.open(assignment, self);
        if (abortCause != null) {
            dataPlane.abort(abortCause);
        }
        ops = new CollectiveOps(rank, size, dataPlane);
        eager = new EagerReduction(reducer, size);
    }

    boolean opened() {
        return ops != null;
    }

    // ---------------------------------------------------------------- submissions

    /** Takes a newly submitted op: it waits in agreement rounds if cached, else it goes to the coordinator. */
    void admit(PendingOp op) {
        KoloException stall = stalled.remove(op.spec.name);
        if (stall != null) {
            completion.finish(op, null, stall);
            return;
        }
        if (size == 1) {
            runLocally(op);
            return;
        }
        if (!anyJoined && op.spec.cacheable()) {
            int id = cache.idOf(op.spec);
            if (id >= 0 && !waiting.containsKey(id)) {
                op.cacheId = id;
                waiting.put(id, op);
                setReady(id, true);
                dirty = true;
                observability.metrics.cacheHit(true);
                return;
            }
            int stale = cache.idOfName(op.spec.name);
            if (stale >= 0) {
                invalid.set(stale); // another spec under a cached name: every rank drops the entry
                dirty = true;
            }
        }
        request(op);
    }

    private void request(PendingOp op) {
        op.cacheId = -1;
        observability.metrics.cacheHit(false);
        node.sendToCoordinator(coordinatorNode, new OpRequest(generation, rank, op.spec, received));
        long now = System.nanoTime();
        unanswered.put(op.spec.name, new Unanswered(op.spec, now));
        resendAt = Math.min(resendAt, now + RESEND_NANOS);
    }

    /** A request to the coordinator whose answer has not arrived. */
    private static final class Unanswered {
        final OpSpec spec;
        long sentNanos;

        Unanswered(OpSpec spec, long sentNanos) {
            this.spec = spec;
            this.sentNanos = sentNanos;
        }
    }

    /**
     * Sends again the requests (and the join) unanswered for {@link #RESEND_NANOS}, with how many responses
     * this rank holds now: the coordinator tells the copy from a new request by it.
     */
    void resendDue(long now) {
        if (now < resendAt || abortCause != null) {
            return;
        }
        long next = Long.MAX_VALUE;
        for (Unanswered u : unanswered.values()) {
            if (now - u.sentNanos >= RESEND_NANOS) {
                node.sendToCoordinator(coordinatorNode, new OpRequest(generation, rank, u.spec, received));
                observability.metrics.resent();
                u.sentNanos = now;
            }
            next = Math.min(next, u.sentNanos + RESEND_NANOS);
        }
        if (joinSentNanos >= 0) {
            if (now - joinSentNanos >= RESEND_NANOS) {
                node.sendToCoordinator(coordinatorNode, new JoinRequest(generation, rank, received));
                observability.metrics.resent();
                joinSentNanos = now;
            }
            next = Math.min(next, joinSentNanos + RESEND_NANOS);
        }
        resendAt = next;
    }

    /** This rank joins: it has no more data and contributes zeros to allreduces until every rank has joined. */
    void join(CompletableFuture<Integer> result) {
        if (joinResult != null && !joinResult.isDone()) {
            result.completeExceptionally(new IllegalStateException("join() is already in progress on this rank"));
            return;
        }
        if (size == 1) {
            result.complete(rank);
            return;
        }
        joined = true;
        joinResult = result;
        dirty = true;
        node.sendToCoordinator(coordinatorNode, new JoinRequest(generation, rank, received));
        joinSentNanos = System.nanoTime();
        resendAt = Math.min(resendAt, joinSentNanos + RESEND_NANOS);
    }

    /**
     * The generation ended (its pending ops have failed): a join in progress fails with it, and everything it
     * waited for is dropped, so that no deadline of a dead generation (a tensor's demotion, a response's
     * agreement) falls due and wakes the engine again and again until the next generation.
     */
    void aborted(KoloException cause) {
        if (joinResult != null) {
            joinResult.completeExceptionally(cause);
        }
        joined = false;
        waiting.clear();
        java.util.Arrays.fill(ready, 0);
        invalid.clear();
        responses.clear();
        arrivals.clear();
        unanswered.clear();
        joinSentNanos = -1;
        resendAt = Long.MAX_VALUE;
        executed = received;
        dirty = false;
    }

    /** A coordinator response or join completion of this generation has arrived. */
    void onResponse(ControlMessage m, long arrivedNanos) {
        long sequence = m instanceof OpResponse r ? r.sequence() : ((JoinResponse) m).sequence();
        if (sequence < received || responses.containsKey(sequence)) {
            return; // a duplicate
        }
        responses.put(sequence, m);
        arrivals.put(sequence, arrivedNanos);
        if (m instanceof OpResponse r) {
            r.entries().forEach(e -> unanswered.remove(e.name()));
        } else {
            joinSentNanos = -1;
        }
        while (responses.containsKey(received)) {
            received++;
            dirty = true;
        }
    }

    // ---------------------------------------------------------------- rounds

    /** @return whether this rank has something to tell the others, or a waiting tensor is due for demotion */
    boolean roundDue(long now) {
        return size > 1 && ops != null && abortCause == null && (dirty || now >= roundDeadline());
    }

    /** @return when this rank must next do something unasked: a round ({@link #roundDeadline}) or a resend */
    long nextDeadline() {
        return Math.min(roundDeadline(), abortCause != null ? Long.MAX_VALUE : resendAt);
    }

    /**
     * @return when the oldest tensor waiting in rounds is due to go to the coordinator, or the oldest response
     *         held here (and not yet everywhere) is overdue; Long.MAX_VALUE when neither
     */
    private long roundDeadline() {
        if (abortCause != null) {
            return Long.MAX_VALUE; // set at once, from any thread; aborted() drops the state under the lock
        }
        long next = Long.MAX_VALUE;
        if (!waiting.isEmpty()) {
            next = waiting.values().iterator().next().submitNanos + demoteAfterNanos;
        }
        Long held = arrivals.get(executed);
        if (held != null) {
            next = Math.min(next, held + responseAgreementNanos);
        }
        return next;
    }

    /**
     * @return whether this rank waits for anything (a tensor, a join, a coordinator response) or has something
     *         to tell the others
     */
    boolean busy() {
        return abortCause == null && (dirty || !waiting.isEmpty() || (joinResult != null && !joinResult.isDone())
                || received > executed);
    }

    /**
     * One agreement round: exchange with every rank, then run what every rank has ready, then what the
     * coordinator has answered and every rank holds, then apply the cache changes every rank makes here.
     */
    void round(long now) {
        DataPlane dp = dataPlane;
        for (PendingOp op : waiting.values()) {
            if (now - op.submitNanos < demoteAfterNanos) {
                break;
            }
            invalid.set(op.cacheId); // waited too long: to the coordinator, whose stall inspector sees it
        }
        int words = RoundMessage.words(cache.idLimit());
        int max = RoundMessage.maxBytes(words, size);
        ensureWords(words);
        ByteBuffer out = dp.roundOutbox(max);
        out.putInt(RoundMessage.FLAGS, joined ? RoundMessage.FLAG_JOINED : 0).putInt(RoundMessage.WORDS, words)
                .putLong(RoundMessage.RECEIVED, received);
        int invalidAt = RoundMessage.invalidAt(words);
        long[] invalidWords = invalid.toLongArray();
        for (int w = 0; w < words; w++) {
            long inv = w < invalidWords.length ? invalidWords[w] : 0;
            out.putLong(RoundMessage.BITS + 8 * w, ready[w]);
            out.putLong(invalidAt + 8 * w, inv);
            agreedBits[w] = ready[w];
            invalidBits[w] = inv;
        }
        int end = writeEager(out, words);
        invalid.clear();
        dirty = false;
        dp.exchangeRound(end, max);
        long agreedAt = System.nanoTime();
        observability.metrics.round();

        ByteBuffer in = dp.roundInbox();
        long minReceived = received;
        List<Integer> lacking = null;
        boolean someJoined = joined;
        for (int j = 0; j < size; j++) {
            if (j == rank) {
                continue;
            }
            int base = dp.roundOffset(j);
            int length = dp.roundLength(j);
            if (length < RoundMessage.eagerAt(words) || in.getInt(base + RoundMessage.WORDS) != words) {
                protocolError("rank " + j + " sent a round message of " + length + " bytes for "
                        + (length >= 8 ? in.getInt(base + RoundMessage.WORDS) : -1) + " cache words; this rank has "
                        + words + ": the ranks' caches differ");
                return;
            }
            someJoined |= (in.getInt(base + RoundMessage.FLAGS) & RoundMessage.FLAG_JOINED) != 0;
            long theirs = in.getLong(base + RoundMessage.RECEIVED);
            if (theirs < 0) {
                protocolError("rank " + j + " reports " + theirs + " coordinator responses");
                return;
            }
            minReceived = Math.min(minReceived, theirs);
            if (theirs <= executed && received > executed) {
                if (lacking == null) {
                    lacking = new ArrayList<>();
                }
                lacking.add(j);
            }
            for (int w = 0; w < words; w++) {
                agreedBits[w] &= in.getLong(base + RoundMessage.BITS + 8 * w);
                invalidBits[w] |= in.getLong(base + invalidAt + 8 * w);
            }
        }
        int n = 0;
        for (int w = 0; w < words; w++) {
            long bits = agreedBits[w] & ~invalidBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (n == agreed.length) {
                    agreed = Arrays.copyOf(agreed, 2 * n);
                }
                agreed[n++] = id;
            }
        }
        if (n > 0 && !runAgreed(n, words, out, in, dp, agreedAt)) {
            return;
        }
        removed.clear();
        for (int w = 0; w < words; w++) {
            long bits = invalidBits[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (cache.spec(id) != null) {
                    cache.remove(id);
                    removed.add(id);
                }
            }
        }
        Long heldSince = arrivals.get(executed);
        if (lacking != null && heldSince != null && agreedAt - heldSince > responseAgreementNanos) {
            // A generation failure like a lost peer: an elastic job regroups and the new generation's
            // coordinator sends everything afresh; a fixed job stops with this message.
            completion.abort(this, new WorkerLostException("coordinator response " + executed + " of generation "
                    + generation + " reached this rank " + (agreedAt - heldSince) / 1_000_000 + " ms ago but not ranks "
                    + lacking + ": the control plane lost a message; generation " + generation + " ends", -1, null));
            return;
        }
        while (executed < minReceived && abortCause == null) {
            long sequence = executed++;
            ControlMessage m = responses.remove(sequence);
            long arrived = arrivals.remove(sequence);
            if (m instanceof OpResponse r) {
                if (!runResponse(r, arrived)) {
                    return;
                }
            } else {
                joined = false;
                if (joinResult != null) {
                    joinResult.complete(((JoinResponse) m).lastRank());
                }
            }
        }
        anyJoined = someJoined;
        if (anyJoined) {
            for (PendingOp op : new ArrayList<>(waiting.values())) {
                demote(op);
            }
        } else {
            for (int id : removed) {
                PendingOp op = waiting.get(id);
                if (op != null) {
                    demote(op);
                }
            }
        }
    }

    /** Data of this rank's ready small allreduces, in id order, as every receiver expects it. */
    private int writeEager(ByteBuffer out, int words) {
        int pos = RoundMessage.eagerAt(words);
        int budget = RoundMessage.eagerBytes(size);
        for (int w = 0; w < words; w++) {
            long bits = ready[w];
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                int bytes = (int) spec.byteSize();
                if (RoundMessage.eager(spec, size) && bytes <= budget) {
                    out.put(pos, waiting.get(id).input.data(), 0, bytes);
                    pos += bytes;
                    budget -= bytes;
                }
            }
        }
        return pos;
    }

    /**
     * Where rank r's message holds the data of each agreed id, or -1 where it sent none: the same rule as
     * {@link #writeEager} applied to that rank's ready set. @return false after a protocol error
     */
    private boolean locateEager(int r, ByteBuffer buf, int base, int length, int words, int n) {
        if (eagerOffsets[r].length < n) {
            eagerOffsets[r] = new int[agreed.length];
        }
        int[] offsets = eagerOffsets[r];
        Arrays.fill(offsets, 0, n, -1);
        int pos = RoundMessage.eagerAt(words);
        int budget = RoundMessage.eagerBytes(size);
        int k = 0;
        for (int w = 0; w < words && k < n; w++) {
            long bits = buf.getLong(base + RoundMessage.BITS + 8 * w);
            while (bits != 0 && k < n) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                OpSpec spec = cache.spec(id);
                if (spec == null) {
                    protocolError("rank " + r + " is ready for cache id " + id + ", which this rank does not hold");
                    return false;
                }
                while (k < n && agreed[k] < id) {
                    k++;
                }
                int bytes = (int) spec.byteSize();
                if (RoundMessage.eager(spec, size) && bytes <= budget) {
                    if (pos + bytes > length) {
                        protocolError("rank " + r + "'s round message ends before the data of '" + spec.name + "'");
                        return false;
                    }
                    if (k < n && agreed[k] == id) {
                        offsets[k] = pos;
                    }
                    pos += bytes;
                    budget -= bytes;
                }
            }
        }
        return true;
    }

    /** Runs the agreed ids: eager ones from the round's bytes, the rest fused on the data plane. */
    private boolean runAgreed(int n, int words, ByteBuffer out, ByteBuffer in, DataPlane dp, long agreedAt) {
        for (int r = 0; r < size; r++) {
            ByteBuffer buf = r == rank ? out : in;
            int base = r == rank ? 0 : dp.roundOffset(r);
            int length = r == rank ? Integer.MAX_VALUE : dp.roundLength(r);
            if (!locateEager(r, buf, base, length, words, n)) {
                return false;
            }
        }
        n = completeGroups(n);
        List<PendingOp> rest = new ArrayList<>();
        List<OpSpec> restSpecs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int id = agreed[k];
            PendingOp op = waiting.remove(id);
            if (op == null) {
                protocolError("every rank is ready for cache id " + id + " but this rank waits for no tensor under it");
                return false;
            }
            setReady(id, false);
            cache.touch(id);
            boolean everywhere = true;
            for (int r = 0; r < size && everywhere; r++) {
                everywhere = eagerOffsets[r][k] >= 0;
            }
            if (everywhere) {
                for (int r = 0; r < size; r++) {
                    vectors[r] = r == rank ? out : in;
                    vectorOffsets[r] = r == rank ? eagerOffsets[r][k] : dp.roundOffset(r) + eagerOffsets[r][k];
                }
                long started = System.nanoTime();
                Tensor result = op.output != null ? op.output : Tensor.allocate(op.spec.dtype, op.spec.shape);
                eager.reduce(op.spec, vectors, vectorOffsets, result.data());
                recordEager(op, agreedAt, started);
                completion.finish(op, result, null);
            } else {
                rest.add(op);
                restSpecs.add(op.spec);
            }
        }
        if (rest.isEmpty()) {
            return true;
        }
        for (int[] batch : FusionPlan.batches(restSpecs, fusionThreshold)) {
            List<OpSpec> specs = new ArrayList<>(batch.length);
            List<long[]> perRank = new ArrayList<>(batch.length);
            List<Tensor> inputs = new ArrayList<>(batch.length);
            List<Tensor> outputs = new ArrayList<>(batch.length);
            List<PendingOp> batchOps = new ArrayList<>(batch.length);
            for (int i : batch) {
                PendingOp op = rest.get(i);
                specs.add(op.spec);
                perRank.add(perRankOfCached(op.spec));
                inputs.add(op.input);
                outputs.add(op.output);
                batchOps.add(op);
            }
            if (!run(specs.get(0).type, batchOps, specs, perRank, inputs, outputs, agreedAt)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Members of a group run only together: a member whose group is not complete among the agreed ids waits
     * (it stays ready, so a later round takes it with the rest). Complete groups move together, in member
     * order, at their first member's place, so that they fuse. @return how many agreed ids remain
     */
    private int completeGroups(int n) {
        Map<String, List<Integer>> groups = null;
        for (int k = 0; k < n; k++) {
            OpSpec s = cache.spec(agreed[k]);
            if (s.groupSize > 1) {
                if (groups == null) {
                    groups = new LinkedHashMap<>();
                }
                groups.computeIfAbsent(s.groupName(), g -> new ArrayList<>()).add(k);
            }
        }
        if (groups == null) {
            return n;
        }
        int[] order = new int[n];
        int m = 0;
        int[][] offsets = new int[size][];
        for (int r = 0; r < size; r++) {
            offsets[r] = eagerOffsets[r].clone();
        }
        int[] ids = agreed.clone();
        for (int k = 0; k < n; k++) {
            OpSpec s = cache.spec(ids[k]);
            if (s.groupSize < 2) {
                order[m++] = k;
                continue;
            }
            List<Integer> members = groups.get(s.groupName());
            if (members == null || members.size() < s.groupSize || members.get(0) != k) {
                continue; // incomplete (waits), or placed with its group's first member
            }
            members.sort((x, y) -> Integer.compare(OpSpec.groupIndex(cache.spec(ids[x]).name),
                    OpSpec.groupIndex(cache.spec(ids[y]).name)));
            for (int member : members) {
                order[m++] = member;
            }
        }
        for (int i = 0; i < m; i++) {
            agreed[i] = ids[order[i]];
            for (int r = 0; r < size; r++) {
                eagerOffsets[r][i] = offsets[r][order[i]];
            }
        }
        return m;
    }

    /** Per-rank counts of a cached op: every rank's spec is the cached one, so an allgather's rows are equal. */
    private long[] perRankOfCached(OpSpec spec) {
        if (spec.type != OpType.ALLGATHER) {
            return new long[0];
        }
        long[] rows = new long[size];
        Arrays.fill(rows, spec.rows());
        return rows;
    }

    private void demote(PendingOp op) {
        waiting.remove(op.cacheId);
        setReady(op.cacheId, false);
        observability.metrics.demoted();
        request(op);
    }

    private void setReady(int id, boolean on) {
        int w = id >>> 6;
        ensureWords(w + 1);
        if (on) {
            ready[w] |= 1L << id;
        } else {
            ready[w] &= ~(1L << id);
        }
    }

    private void ensureWords(int words) {
        if (ready.length < words) {
            ready = Arrays.copyOf(ready, Math.max(words, 2 * ready.length));
        }
        if (agreedBits.length < words) {
            agreedBits = new long[ready.length];
            invalidBits = new long[ready.length];
        }
    }

    // ---------------------------------------------------------------- coordinator responses

    /** Runs one coordinator response (every rank runs it in the same round). @return false if the generation ended */
    private boolean runResponse(OpResponse r, long arrivedNanos) {
        String malformed = ControlChecks.response(r, size);
        if (malformed != null) {
            protocolError(malformed);
            return false;
        }
        if (!r.failed()) {
            for (ResponseEntry e : r.entries()) {
                if (e.cacheable() && e.spec() != null) {
                    cache.insert(e.spec(), removed::add);
                }
            }
        }
        List<OpSpec> specs = new ArrayList<>(r.entries().size());
        List<long[]> perRank = new ArrayList<>(r.entries().size());
        List<Tensor> inputs = new ArrayList<>(r.entries().size());
        List<Tensor> outputs = new ArrayList<>(r.entries().size());
        List<PendingOp> entryOps = new ArrayList<>(r.entries().size());
        for (ResponseEntry e : r.entries()) {
            PendingOp op = completion.pending(e.name());
            if (op != null && (op.generation != this || op.cacheId >= 0)) {
                op = null; // not this generation's request (a new submit of the name, in rounds or not yet admitted)
            }
            entryOps.add(op);
            if (r.failed()) {
                continue;
            }
            OpSpec spec = op != null ? op.spec : e.spec();
            if (op == null && !(joined && r.type() == OpType.ALLREDUCE && spec != null)) {
                protocolError("the coordinator scheduled " + r.type().label() + " '" + e.name()
                        + "' which this rank never submitted");
                return false;
            }
            String wrong = ControlChecks.entry(r.type(), spec, e.perRank(), rank, size);
            if (wrong != null) {
                protocolError(wrong);
                return false;
            }
            specs.add(spec);
            perRank.add(e.perRank());
            inputs.add(op != null ? op.input : Tensor.allocate(spec.dtype, spec.shape)); // joined: zeros
            outputs.add(op != null ? op.output : null);
        }
        if (r.failed()) {
            if (r.errorKind() == ControlMessage.ErrorKind.MISMATCH) {
                observability.metrics.mismatch();
            }
            KoloException error = r.errorKind() == ControlMessage.ErrorKind.MISMATCH
                    ? new CollectiveMismatchException(r.error()) : new KoloException(r.error());
            for (int i = 0; i < entryOps.size(); i++) {
                PendingOp op = entryOps.get(i);
                if (op != null) {
                    completion.finish(op, null, error);
                } else if (r.errorKind() == ControlMessage.ErrorKind.STALLED) {
                    stalled.put(r.entries().get(i).name(), error);
                }
            }
            return true;
        }
        return run(r.type(), entryOps, specs, perRank, inputs, outputs, arrivedNanos);
    }

    /** Runs one batch on the data plane and completes its ops. @return false if the generation ended */
    private boolean run(OpType type, List<PendingOp> batch, List<OpSpec> specs, List<long[]> perRank,
                        List<Tensor> inputs, List<Tensor> outputs, long agreedAt) {
        long started = System.nanoTime();
        List<Tensor> results;
        try {
            results = ops.run(type, specs, perRank, inputs, outputs);
        } catch (KoloException e) {
            if (e instanceof WorkerLostException) {
                completion.abort(this, e);
            }
            batch.forEach(op -> completion.finish(op, null, e));
            return !(e instanceof WorkerLostException);
        } catch (RuntimeException | Error e) {
            // A bug or a broken installation must not leave ranks waiting: fail this op and the generation.
            LOG.error("{} failed on this rank", type.label(), e);
            KoloException wrapped = new KoloException(type.label() + " failed on this rank: " + e, e);
            batch.forEach(op -> completion.finish(op, null, wrapped));
            completion.abort(this, wrapped);
            return false;
        }
        record(type, batch, agreedAt, started);
        for (int i = 0; i < batch.size(); i++) {
            completion.finish(batch.get(i), results.get(i), null);
        }
        return true;
    }

    /** A job of one: every op runs at once, alone. */
    private void runLocally(PendingOp op) {
        long[] perRank = op.spec.type == OpType.ALLGATHER || op.spec.type == OpType.ALLTOALL
                ? new long[] {op.spec.rows()} : new long[0];
        List<Tensor> outputs = new ArrayList<>(1);
        outputs.add(op.output);
        List<PendingOp> batch = new ArrayList<>(1);
        batch.add(op);
        run(op.spec.type, batch, List.of(op.spec), List.of(perRank), List.of(op.input), outputs, op.submitNanos);
    }

    /** A message this rank cannot follow: the ranks no longer agree, so the generation ends. */
    private void protocolError(String problem) {
        LOG.warn("control plane: rank {} refuses a round or response: {}", rank, problem);
        completion.abort(this, new KoloException("protocol error: " + problem));
    }

    // ---------------------------------------------------------------- observability

    private void record(OpType type, List<PendingOp> batch, long agreedAt, long started) {
        CollectiveOps.Phases p = ops.phases;
        long now = System.nanoTime();
        KoloMetrics metrics = observability.metrics;
        metrics.traffic(type, p.sentBytes, p.receivedBytes);
        if (type == OpType.ALLREDUCE) {
            metrics.fused(batch.size());
        }
        Timeline timeline = observability.timeline();
        for (PendingOp op : batch) {
            if (op == null) {
                continue; // a joined rank's zeros
            }
            metrics.negotiated(agreedAt - op.submitNanos);
            metrics.collective(type, op.spec.dtype, now - op.submitNanos, op.spec.byteSize());
            if (timeline.enabled()) {
                String name = op.spec.name;
                timeline.span(name, "NEGOTIATE_" + type.name(), op.submitNanos, agreedAt);
                timeline.span(name, "QUEUE", agreedAt, started);
                if (p.copyInStart >= 0) {
                    timeline.span(name, "MEMCPY_IN_FUSION_BUFFER", p.copyInStart, p.copyInEnd);
                }
                if (p.splitNanos >= 0) {
                    timeline.span(name, "REDUCE_SCATTER", p.opStart, p.splitNanos);
                    timeline.span(name, "ALLGATHER", p.splitNanos, p.opEnd);
                } else {
                    timeline.span(name, phaseName(type), p.opStart, p.opEnd);
                }
                if (p.copyOutStart >= 0) {
                    timeline.span(name, "MEMCPY_OUT_FUSION_BUFFER", p.copyOutStart, p.copyOutEnd);
                }
            }
        }
    }

    private void recordEager(PendingOp op, long agreedAt, long started) {
        long now = System.nanoTime();
        KoloMetrics metrics = observability.metrics;
        metrics.eager();
        metrics.negotiated(agreedAt - op.submitNanos);
        metrics.collective(OpType.ALLREDUCE, op.spec.dtype, now - op.submitNanos, op.spec.byteSize());
        Timeline timeline = observability.timeline();
        if (timeline.enabled()) {
            timeline.span(op.spec.name, "ROUND_ALLREDUCE", op.submitNanos, agreedAt);
            timeline.span(op.spec.name, "REDUCE_LOCALLY", started, now);
        }
    }

    /** The data-plane phase of an op that has no reduce-scatter/allgather split. */
    private String phaseName(OpType type) {
        if (size == 1) {
            return type.name() + "_LOCAL";
        }
        switch (type) {
            case ALLREDUCE: return "DIRECT_ALLREDUCE"; // small buffers: one exchange, no ring phases
            case ALLGATHER: return "ALLGATHER";
            case BROADCAST: return "BROADCAST";
            case REDUCESCATTER: return "REDUCE_SCATTER";
            default: return "ALLTOALL";
        }
    }

    /** @return how many specs this rank's cache holds */
    int cachedSpecs() {
        return cache.size();
    }
}
