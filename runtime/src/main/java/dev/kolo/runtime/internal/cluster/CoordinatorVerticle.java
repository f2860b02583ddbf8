package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.control.ControlAddresses;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.internal.control.ControlMessage.Hello;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.control.ControlMessage.JoinRequest;
import dev.kolo.runtime.internal.control.ControlMessage.MembersChanged;
import dev.kolo.runtime.internal.control.ControlMessage.OpRequest;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.status.StatusVerticle;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator role, held by the oldest cluster member: closes rendezvous rounds into numbered
 * generations with contiguous ranks, and negotiates the tensors the ranks cannot agree on among themselves
 * (new or changed specs, ranks that joined, tensors that wait too long: see {@link RankGeneration}). Only the oldest member runs it,
 * and every member sees the same oldest member, so there is never a split decision.
 */
final class CoordinatorVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorVerticle.class);

    private final ClusterNode node;
    private final KoloConfig config;
    private final DeliveryOptions control;
    private final Map<String, WorkerInfo> pending = new LinkedHashMap<>();
    private List<String> members = List.of();
    private long lastGeneration;
    private Assignment current;
    private boolean currentAborted;
    /** Nodes of the current generation that announced their close: their leaving ends it in order. */
    private final java.util.Set<String> closingNodes = new java.util.HashSet<>();
    private final boolean takeover;
    private static final long SETTLE_MS = 2000;
    private long settleTimer = -1;
    /**
     * The current generation's negotiations by set id: the whole generation (0) while it runs, and each process
     * set from its first request (which names its ranks); empty when no generation runs.
     */
    private final Map<Integer, SetNegotiation> sets = new LinkedHashMap<>();

    private final Observability observability;
    private final java.util.function.LongSupplier cycleNanos;
    private final StallInspector stalls;

    /**
     * @param cycleNanos the cycle time in force ({@code KOLO_CYCLE_TIME}, or as rank 0's autotuner set it when this
     *        worker is rank 0)
     */
    CoordinatorVerticle(ClusterNode node, long lastGeneration, Assignment current, Observability observability,
                        java.util.function.LongSupplier cycleNanos) {
        this.node = node;
        this.cycleNanos = cycleNanos;
        this.observability = observability;
        this.config = node.config();
        this.stalls = new StallInspector(config.get(Settings.STALL_WARNING), config.get(Settings.STALL_SHUTDOWN),
                observability.metrics);
        this.lastGeneration = lastGeneration;
        this.current = current;
        this.currentAborted = current != null; // a coordinator that takes over inherits a broken generation
        this.takeover = lastGeneration > 0;
        this.control = new DeliveryOptions().setCodecName(ControlCodec.NAME).setSendTimeout(2000);
    }

    @Override
    public Future<?> start() {
        members = node.members();
        var bus = vertx.eventBus();
        bus.<ControlMessage>localConsumer(node.addresses().membersLocal(node.nodeId()),
                m -> onMembers((MembersChanged) m.body()));
        vertx.setPeriodic(stalls.inspectEveryMillis(), id -> inspectStalls());
        vertx.setPeriodic(StatusVerticle.INTERVAL_MILLIS, id -> showStalls());
        return bus.consumer(node.addresses().coordinator(node.nodeId()), this::onMessage)
                .completion()
                .onSuccess(v -> announce());
    }

    private void announce() {
        if (!takeover) {
            LOG.info("coordinating job '{}' (waiting for {} workers)", config.get(Settings.JOB), config.get(Settings.NP));
            return;
        }
        // Takeover: tell everyone who coordinates the next generation.
        CoordinatorAnnounce announce = new CoordinatorAnnounce(lastGeneration + 1, node.nodeId());
        lastGeneration = announce.generation() - 1;
        LOG.info("took over as coordinator for generation {}", announce.generation());
        for (String member : members) {
            vertx.eventBus().send(node.addresses().worker(member), node.seal(member, announce), control);
        }
    }

    private void onMessage(Message<Object> message) {
        ControlMessage m = node.accept(message);
        if (m == null) {
            return; // not authentic, malformed or no control message: dropped and logged
        }
        if (!fromARank(m)) {
            return;
        }
        if (m instanceof Hello h) {
            message.reply(node.seal(h.worker().node(), onHello(h)), control);
        } else if (m instanceof OpRequest r) {
            SetNegotiation set = negotiation(r.generation(), r.set(), r.rank(), r);
            if (set != null) {
                long now = System.nanoTime();
                set.sent.held(r.rank(), r.received());
                if (set.negotiator.onRequest(r.rank(), r.spec(), now, r.received())) {
                    observability.timeline().instant(set.scope.global() ? r.spec().name
                            : "set " + set.scope.id() + "/" + r.spec().name, "RANK_READY " + r.rank(), now);
                    maybeFlush(set);
                } else {
                    resendTo(set, r.rank(), r.received(), "'" + r.spec().name + "'");
                }
            }
        } else if (m instanceof ControlMessage.RankStatus st) {
            if (current != null && !currentAborted && st.generation() == current.generation()) {
                StatusVerticle.post(vertx, node.addresses().status(node.nodeId()), new io.vertx.core.json.JsonObject()
                        .put("kind", "report").put("rank", st.rank()).put("generation", st.generation())
                        .put("report", st.report()));
            }
        } else if (m instanceof JoinRequest j) {
            SetNegotiation set = negotiation(j.generation(), j.set(), j.rank(), j);
            if (set != null) {
                set.sent.held(j.rank(), j.received());
                if (set.negotiator.onJoin(j.rank(), j.received())) {
                    maybeFlush(set);
                } else {
                    resendTo(set, j.rank(), j.received(), "its join");
                }
            }
        } else if (m instanceof ControlMessage.Closing c) {
            WorkerInfo w = current == null || c.generation() != current.generation() ? null
                    : current.workers().stream().filter(x -> x.rank() == c.rank()).findFirst().orElse(null);
            if (w != null) {
                closingNodes.add(w.node());
                message.reply(node.seal(w.node(), c), control);
            }
        } else {
            LOG.warn("dropped unexpected control message {}", m.getClass().getSimpleName());
        }
    }

    /** Requests naming a rank outside the current generation are dropped with a warning. */
    private boolean fromARank(ControlMessage m) {
        int rank;
        long generation;
        if (m instanceof OpRequest r) {
            rank = r.rank();
            generation = r.generation();
        } else if (m instanceof JoinRequest j) {
            rank = j.rank();
            generation = j.generation();
        } else if (m instanceof ControlMessage.RankStatus st) {
            rank = st.rank();
            generation = st.generation();
        } else {
            return true;
        }
        if (current != null && generation == current.generation() && rank >= current.workers().size()) {
            LOG.warn("control plane: the coordinator dropped a {} from rank {}, which generation {} of {} ranks "
                    + "does not have", m.getClass().getSimpleName(), rank, generation, current.workers().size());
            observability.metrics.dropped("not-a-rank");
            return false;
        }
        return true;
    }

    /**
     * The negotiation a request belongs to: of the generation this coordinator negotiates, the whole of it or
     * the process set the request names (its first request opens the set's negotiation). A request of another
     * generation is dropped, and counted: its sender's generation has ended (aborted or regrouping), which ended
     * its pending ops on every rank, so nobody waits for an answer to it. So is one naming a set that does not
     * fit the generation, or disagrees with the set of that id already negotiated (the ranks checked it when they
     * created the set, so only a faulty sender does that).
     *
     * @param setRank the sender's rank in the set
     * @return the negotiation, or null when the request is dropped
     */
    private SetNegotiation negotiation(long generation, SetScope scope, int setRank, ControlMessage request) {
        if (sets.isEmpty() || currentAborted || current == null || current.generation() != generation) {
            observability.metrics.dropped("generation-ended");
            LOG.debug("dropped a {} of generation {}: the coordinator negotiates {}",
                    request.getClass().getSimpleName(), generation,
                    current == null || currentAborted ? "none" : current.generation());
            return null;
        }
        SetNegotiation set = sets.get(scope.id());
        if (set == null && !scope.global()) {
            set = SetNegotiation.processSet(current, scope, config.get(Settings.FUSION_THRESHOLD));
            if (set != null) {
                sets.put(scope.id(), set);
                LOG.debug("negotiating {} of generation {}", scope.describe(), generation);
            }
        }
        if (set == null || !set.scope.equals(scope) || setRank >= set.workers.size()) {
            LOG.warn("control plane: the coordinator dropped a {} for {} from its rank {}: generation {} of {} ranks "
                    + "negotiates {}", request.getClass().getSimpleName(), scope.describe(), setRank, generation,
                    current.workers().size(), set == null ? "no such set" : set.scope.describe());
            observability.metrics.dropped("not-a-rank");
            return null;
        }
        return set;
    }

    /**
     * A rank re-sent a request this coordinator has already counted: it has waited a resend interval for the
     * answer. Counting it again would count the rank twice; instead the rank gets again every response from
     * the first it lacks (its request or the answer was lost, or both are merely slow: a rank drops duplicates).
     */
    private void resendTo(SetNegotiation set, int rank, long received, String what) {
        observability.metrics.copy();
        WorkerInfo w = set.workers.get(rank);
        List<ControlMessage> lacking = set.sent.from(received);
        if (!lacking.isEmpty()) {
            LOG.info("control plane: rank {} re-sent {} holding {} responses of generation {}{}; sending it the {} "
                    + "from {} again", set.scope.globalRank(rank), what, received, current.generation(),
                    set.scope.global() ? "" : " process set " + set.scope.id(), lacking.size(), received);
        }
        for (ControlMessage response : lacking) {
            vertx.eventBus().send(node.addresses().worker(w.node()), node.seal(w.node(), response), control);
        }
    }

    /**
     * Sends ready responses at once when nothing else is half-submitted (a lone op pays no batching delay),
     * else waits up to the cycle time so that a burst of tensors (a backward pass) fuses into few responses.
     */
    private void maybeFlush(SetNegotiation set) {
        long cycle = cycleNanos.getAsLong();
        if (set.negotiator.pendingCount() == 0 || cycle == 0) {
            flush(set);
        } else if (set.flushTimer < 0) {
            long delay = Math.max(1, cycle / 1_000_000);
            set.flushTimer = vertx.setTimer(delay, id -> {
                set.flushTimer = -1;
                flush(set);
            });
        }
    }

    private void flush(SetNegotiation set) {
        if (set.flushTimer >= 0) {
            vertx.cancelTimer(set.flushTimer);
            set.flushTimer = -1;
        }
        if (sets.get(set.scope.id()) != set || currentAborted) {
            return; // its generation ended
        }
        for (ControlMessage response : set.negotiator.drain()) {
            set.sent.sent(response);
            for (WorkerInfo w : set.workers) {
                vertx.eventBus().send(node.addresses().worker(w.node()), node.seal(w.node(), response), control);
            }
        }
    }

    /** Runs the stall inspector over every negotiation of the current generation; a failed stall is sent at once. */
    private void inspectStalls() {
        if (currentAborted) {
            return;
        }
        for (SetNegotiation set : List.copyOf(sets.values())) {
            if (stalls.inspect(set)) {
                flush(set);
            }
        }
    }

    /** Tensors waiting longer than a status interval, for the status page: which ranks they wait for, how long. */
    private void showStalls() {
        if (sets.isEmpty() || currentAborted) {
            return;
        }
        StatusVerticle.post(vertx, node.addresses().status(node.nodeId()), new io.vertx.core.json.JsonObject()
                .put("kind", "stalls").put("stalls", stalls.waiting(sets.values(), StatusVerticle.INTERVAL_MILLIS)));
    }

    private HelloReply onHello(Hello hello) {
        WorkerInfo w = hello.worker();
        if (!members.contains(w.node())) {
            // The event bus can reach a worker that is not (or no longer, after a partition healed before the
            // cluster views converged) a member of this cluster: admitting it would form a generation whose
            // ranks disagree about the membership. It asks again every few hundred ms; it is admitted once
            // Hazelcast lists it here.
            LOG.debug("hello from {} ignored: not a member of this worker's cluster yet", w.describe());
            return reply(true, "");
        }
        lastGeneration = Math.max(lastGeneration, hello.lastGeneration());
        if (current != null && !currentAborted) {
            boolean member = current.workers().stream().anyMatch(x -> x.node().equals(w.node()));
            if (member && hello.lastGeneration() < current.generation()) {
                // The worker missed its assignment: send it again.
                vertx.eventBus().send(node.addresses().worker(w.node()), node.seal(w.node(), current), control);
                return reply(true, "");
            }
            if (member) {
                // A rank of the running generation regroups (a membership change agreed at a commit).
                endCurrent("a rank regroups");
            } else if (!config.elastic()) {
                return reply(false, "job '" + config.get(Settings.JOB) + "' already runs with its " + current.workers().size()
                        + " workers (np=" + config.get(Settings.NP) + ") in generation " + current.generation()
                        + "; this worker is surplus: stop it, or make the job elastic with KOLO_MIN_NP/KOLO_MAX_NP");
            } else if (current.workers().size() >= config.get(Settings.MAX_NP)) {
                // The job runs at its maximum: the newcomer waits outside it, and nothing regroups for it. It
                // takes the first place that frees (a worker lost or leaving), earliest arrival first.
                if (!pending.containsKey(w.node())) {
                    pending.put(w.node(), w);
                    LOG.info("worker {} waits for a place: the job runs at its maximum of {} workers",
                            w.describe(), config.get(Settings.MAX_NP));
                }
                return reply(true, waitingNotice());
            } else if (!pending.containsKey(w.node())) {
                // A newcomer: the running ranks regroup at their next commit to admit it.
                announcePending();
            }
        }
        if (!pending.containsKey(w.node())) {
            pending.put(w.node(), w);
            LOG.info("worker {} arrived ({} waiting)", w.describe(), pending.size());
        }
        maybeCloseRound();
        return reply(true, "");
    }

    /** What a worker waiting outside a job at its maximum is told: the job's size and maximum. */
    private String waitingNotice() {
        return HelloReply.WAITING + " job '" + config.get(Settings.JOB) + "' runs generation " + current.generation() + " with "
                + current.workers().size() + " workers, its maximum (KOLO_MAX_NP=" + config.get(Settings.MAX_NP) + "); this worker "
                + "joins at the first commit after a place frees (a worker lost or leaving)";
    }

    /** Decides whether the waiting workers form the next generation now. */
    private void maybeCloseRound() {
        if (current != null && !currentAborted) {
            return; // running: newcomers wait for the ranks' next commit
        }
        if (current == null) {
            if (pending.size() >= config.get(Settings.NP)) {
                closeRound(); // the first generation waits for np workers
            }
            return;
        }
        if (!config.elastic() || pending.size() < config.get(Settings.MIN_NP) || !majorityOfLast()) {
            return; // wait: workers' own deadline (KOLO_ELASTIC_TIMEOUT) ends a wait that cannot succeed
        }
        boolean everyone = members.stream().allMatch(pending::containsKey);
        // Every live rank of the last generation is back: a worker waiting outside never takes the place of
        // one of them that is merely slower to ask.
        boolean lastRanksBack = current.workers().stream().filter(w -> members.contains(w.node()))
                .allMatch(w -> pending.containsKey(w.node()));
        if (everyone || lastRanksBack && pending.size() >= config.get(Settings.MAX_NP)) {
            closeRound();
        } else if (settleTimer < 0) {
            // A live member has not asked yet (hung, or about to leave): go on without it after a short while.
            settleTimer = vertx.setTimer(SETTLE_MS, id -> {
                settleTimer = -1;
                if (currentAborted && config.elastic() && pending.size() >= config.get(Settings.MIN_NP) && majorityOfLast()) {
                    closeRound();
                }
            });
        }
    }

    /** Only a strict majority of the last agreed generation may form the next: never two lineages. */
    private boolean majorityOfLast() {
        if (current == null) {
            return true;
        }
        long present = current.workers().stream().filter(w -> pending.containsKey(w.node())).count();
        return present * 2 > current.workers().size();
    }

    private void endCurrent(String why) {
        if (current != null && !currentAborted) {
            currentAborted = true;
            endNegotiations();
            LOG.info("generation {} ends: {}", current.generation(), why);
        }
    }

    private void announcePending() {
        ControlMessage.MembershipPending m = new ControlMessage.MembershipPending(current.generation());
        for (WorkerInfo w : current.workers()) {
            vertx.eventBus().send(node.addresses().worker(w.node()), node.seal(w.node(), m), control);
        }
    }

    /** The generation ended: so do its negotiations and their cycle timers. */
    private void endNegotiations() {
        for (SetNegotiation set : sets.values()) {
            if (set.flushTimer >= 0) {
                vertx.cancelTimer(set.flushTimer);
            }
        }
        sets.clear();
    }

    private HelloReply reply(boolean accepted, String reason) {
        List<String> arrived = new ArrayList<>();
        pending.values().forEach(w -> arrived.add(w.describe()));
        int expected = current == null ? config.get(Settings.NP) : config.get(Settings.MIN_NP);
        return new HelloReply(accepted, reason, expected, arrived);
    }

    private void closeRound() {
        // Places go first to this node's own worker (the coordinator is one of the generation's ranks), then to
        // the last generation's ranks, oldest member first, then to newcomers in the order they arrived.
        List<WorkerInfo> joinOrder = new ArrayList<>(pending.values());
        List<String> arrival = new ArrayList<>(pending.keySet());
        joinOrder.sort(java.util.Comparator.comparingInt((WorkerInfo w) -> w.node().equals(node.nodeId()) ? 0 : 1)
                .thenComparingInt(w -> wasRank(w.node()) ? 0 : 1)
                .thenComparingInt(w -> wasRank(w.node()) ? age(w.node()) : arrival.indexOf(w.node())));
        List<WorkerInfo> chosen = joinOrder.subList(0, Math.min(joinOrder.size(), config.get(Settings.MAX_NP)));
        List<WorkerInfo> ranked = RankAssigner.assign(chosen);
        long generation = lastGeneration + 1;
        current = new Assignment(generation, node.nodeId(), ranked);
        currentAborted = false;
        closingNodes.clear();
        lastGeneration = generation;
        chosen.forEach(w -> pending.remove(w.node()));
        endNegotiations();
        sets.put(0, SetNegotiation.global(current, config.get(Settings.FUSION_THRESHOLD)));
        if (settleTimer >= 0) {
            vertx.cancelTimer(settleTimer);
            settleTimer = -1;
        }
        LOG.info("generation {}: {} workers ranked", generation, ranked.size());
        for (WorkerInfo w : ranked) {
            vertx.eventBus().send(node.addresses().worker(w.node()), node.seal(w.node(), current), control);
        }
        if (!pending.isEmpty()) {
            LOG.info("{} workers wait for a place: generation {} runs at the maximum of {}", pending.size(),
                    generation, config.get(Settings.MAX_NP));
        }
    }

    private boolean wasRank(String nodeId) {
        return current != null && current.workers().stream().anyMatch(w -> w.node().equals(nodeId));
    }

    private int age(String nodeId) {
        int i = members.indexOf(nodeId);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private void onMembers(MembersChanged change) {
        members = change.members();
        for (String gone : change.removed()) {
            pending.remove(gone);
            if (current != null && !currentAborted
                    && current.workers().stream().anyMatch(w -> w.node().equals(gone))) {
                currentAborted = true;
                endNegotiations();
                if (closingNodes.contains(gone)) {
                    LOG.info("generation {} ended: node {} closed", current.generation(), ControlAddresses.shortId(gone));
                } else {
                    LOG.warn("generation {} aborted: node {} left", current.generation(), ControlAddresses.shortId(gone));
                }
            }
        }
        if (!change.removed().isEmpty()) {
            maybeCloseRound(); // the last missing member may have been the one that left
        }
    }
}
