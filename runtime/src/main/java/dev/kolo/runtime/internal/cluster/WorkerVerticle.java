package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.control.ControlAddresses;
import dev.kolo.runtime.internal.control.ControlChecks;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.internal.control.ControlMessage.Hello;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.control.ControlMessage.MembersChanged;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.status.StatusVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker side of membership: asks the coordinator for a place until assigned, follows coordinator
 * changes, aborts its generation when a member of it leaves, and takes the coordinator role when it becomes
 * the oldest member. All state is confined to this verticle's context.
 */
public final class WorkerVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerVerticle.class);
    private static final long HELLO_INTERVAL_MS = 300;

    private final ClusterNode node;
    private final WorkerInfo self;
    private final AtomicReference<WorkerView> view;
    private final DeliveryOptions control;
    private final Promise<Assignment> firstAssignment = Promise.promise();
    /** The rendezvous this worker waits for: the first one, or a later one after {@link #rejoin()}. */
    private Promise<Assignment> joining = firstAssignment;
    private final java.util.concurrent.atomic.AtomicBoolean changePending;

    private List<String> members = List.of();
    private Assignment assignment;
    private String coordinatorNode;
    private long coordinatorGeneration;
    private KoloException abortCause;
    /**
     * Workers of the current generation that left the cluster, in the order the cluster saw them go. The data
     * plane names whichever peer closed a connection first, which may be a survivor aborting its own ring; the
     * cluster's order names the worker that really went first.
     */
    private final List<WorkerInfo> departed = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Nodes of the current generation that announced their close: their leaving is an orderly end, not a loss. */
    private final java.util.Set<String> closingPeers = new java.util.HashSet<>();
    /** This worker is closing: whoever leaves now, nothing is lost that its program still waits for. */
    private boolean closing;
    /** Nodes of the current generation this worker sent its own close notice to. */
    private final java.util.Set<String> told = new java.util.HashSet<>();
    /**
     * Peers whose close notice crossed this worker's own and is still on its way here: the close waits for it,
     * so that it does not arrive after this worker stopped listening (Vert.x logs such a message at WARN).
     */
    private final java.util.Map<String, Promise<Void>> crossingNotices = new java.util.HashMap<>();
    private HelloReply lastReply;
    private boolean coordinatorDeployed;
    private Future<String> coordinatorDeployment;
    private long helloTimer = -1;
    private final List<Consumer<WorkerView>> viewListeners = new ArrayList<>();
    private final CollectiveClient collectives;
    /** How this worker names itself when it drops a malformed message. */
    private final String receiver;

    private final Observability observability;
    private final WorkerStatus status;

    public WorkerVerticle(ClusterNode node, WorkerInfo self, AtomicReference<WorkerView> view,
                   CollectiveClient collectives, Observability observability,
                   java.util.concurrent.atomic.AtomicBoolean changePending, WorkerStatus status) {
        this.status = status;
        this.changePending = changePending;
        this.node = node;
        this.observability = observability;
        this.collectives = collectives;
        this.self = self;
        this.view = view;
        this.control = new DeliveryOptions().setCodecName(ControlCodec.NAME).setSendTimeout(2000);
        this.receiver = "worker " + ControlAddresses.shortId(node.nodeId());
    }

    @Override
    public Future<?> start() {
        var bus = vertx.eventBus();
        bus.<ControlMessage>localConsumer(node.addresses().membersLocal(node.nodeId()),
                m -> onMembers((MembersChanged) m.body()));
        members = node.members();
        coordinatorNode = members.get(0);
        helloTimer = vertx.setPeriodic(0, HELLO_INTERVAL_MS, id -> sendHello());
        vertx.setPeriodic(StatusVerticle.INTERVAL_MILLIS, id -> status.report(vertx, view.get(), control));
        return bus.consumer(node.addresses().worker(node.nodeId()), this::onControl)
                .completion()
                .onSuccess(v -> maybeTakeCoordinatorRole());
    }

    /** Completes with the first assignment, or fails if the coordinator refuses this worker. */
    public Future<Assignment> firstAssignment() {
        return firstAssignment.future();
    }

    /**
     * Leaves the current generation (aborting it locally if it is still running) and asks the coordinator
     * for a place in the next one. Completes with the new assignment.
     */
    public Future<Assignment> rejoin() {
        Promise<Assignment> next = Promise.promise();
        context.runOnContext(v -> {
            if (joining != null && !joining.future().isComplete()) {
                joining.future().onComplete(next);
                return;
            }
            if (assignment != null && abortCause == null) {
                endGeneration(new KoloException("generation " + assignment.generation() + " ended on this rank: it "
                        + "is regrouping (rejoin)"), false);
            }
            changePending.set(false);
            joining = next;
            lastReply = null;
            publishView();
            vertx.cancelTimer(helloTimer);
            helloTimer = vertx.setPeriodic(0, HELLO_INTERVAL_MS, id -> sendHello());
        });
        return next.future();
    }

    /**
     * Tells every other worker of the current generation that this one is closing, so that they end the
     * generation when it leaves as an orderly end (logged at INFO, not counted as a lost worker) rather than a
     * failure. Completes once each has noted it, or has not answered within the control plane's send timeout;
     * never fails: a peer that does not answer only reports the close as a loss.
     */
    public Future<Void> announceClosing() {
        Promise<Void> done = Promise.promise();
        context.runOnContext(v -> {
            closing = true;
            WorkerInfo me = myPlace();
            // Also after the generation ended with a loss: the peers still tell this close from another loss.
            if (me == null) {
                done.complete();
                return;
            }
            // A peer that announced its own close first is not told: it may have stopped listening by now.
            List<Future<?>> noted = new ArrayList<>();
            for (WorkerInfo w : assignment.workers()) {
                if (!w.node().equals(node.nodeId()) && members.contains(w.node()) && !closingPeers.contains(w.node())) {
                    told.add(w.node());
                    noted.add(vertx.eventBus().request(node.addresses().worker(w.node()),
                            node.seal(w.node(), new ControlMessage.Closing(assignment.generation(), me.rank())), control)
                            .compose(reply -> crossingNotice(w.node(), me.rank(), reply)));
                }
            }
            if (coordinatorNode != null && !coordinatorNode.equals(node.nodeId()) && members.contains(coordinatorNode)
                    && !closingPeers.contains(coordinatorNode)) {
                noted.add(vertx.eventBus().request(node.addresses().coordinator(coordinatorNode), node.seal(
                        coordinatorNode, new ControlMessage.Closing(assignment.generation(), me.rank())), control));
            }
            Future.join(noted).onComplete(x -> done.complete());
        });
        return done.future();
    }

    /**
     * A peer answers this worker's close notice with its own notice when it is closing too and had already sent
     * it one (the two crossed): completes once that notice has arrived here. The peer sent it before it answered,
     * but over another route (the first message to an address waits for the cluster's lookup of it, an answer
     * does not), so it may still be on its way.
     */
    private Future<Void> crossingNotice(String peer, int myRank, Message<Object> reply) {
        boolean crossed = node.accept(reply) instanceof ControlMessage.Closing c && c.rank() != myRank;
        if (!crossed || closingPeers.contains(peer)) {
            return Future.succeededFuture();
        }
        return crossingNotices.computeIfAbsent(peer, p -> Promise.promise()).future();
    }

    /** @return this worker's place in the current generation, or null if it has none */
    private WorkerInfo myPlace() {
        return assignment == null ? null : assignment.workers().stream()
                .filter(w -> w.node().equals(node.nodeId())).findFirst().orElse(null);
    }

    /** Registers a callback (run on this verticle's context) for every published view. */
    void onView(Consumer<WorkerView> listener) {
        context.runOnContext(v -> viewListeners.add(listener));
    }

    /** @return what the last coordinator reply said about the round, for a rendezvous timeout message */
    public Future<HelloReply> lastHelloReply() {
        Promise<HelloReply> p = Promise.promise();
        context.runOnContext(v -> p.complete(lastReply));
        return p.future();
    }

    private void sendHello() {
        Promise<Assignment> waiting = joining;
        if (waiting == null || waiting.future().isComplete()) {
            vertx.cancelTimer(helloTimer);
            return;
        }
        long lastGeneration = assignment == null ? 0 : assignment.generation();
        vertx.eventBus().request(node.addresses().coordinator(coordinatorNode),
                        node.seal(coordinatorNode, new Hello(self, lastGeneration)), control)
                .onSuccess(reply -> {
                    if (!(node.accept(reply) instanceof HelloReply r)) {
                        return; // not authentic or malformed: ignored (and logged), the next tick asks again
                    }
                    lastReply = r;
                    if (!r.accepted()) {
                        vertx.cancelTimer(helloTimer);
                        waiting.tryFail(new KoloException(r.reason()));
                    }
                });
        // Failures (no coordinator consumer yet, timeout) are retried on the next tick.
    }

    private void onControl(Message<Object> message) {
        ControlMessage m = node.accept(message);
        if (m == null) {
            return; // not authentic, malformed or no control message: dropped and logged
        }
        if (m instanceof Assignment a) {
            onAssignment(a);
        } else if (m instanceof ControlMessage.Closing c) {
            WorkerInfo peer = assignment == null || c.generation() != assignment.generation() ? null
                    : assignment.workers().stream().filter(w -> w.rank() == c.rank()).findFirst().orElse(null);
            if (peer != null) {
                closingPeers.add(peer.node());
                node.departing(peer.node());
                collectives.peerClosing(peer.rank());
                Promise<Void> awaited = crossingNotices.remove(peer.node());
                if (awaited != null) {
                    awaited.complete();
                }
                WorkerInfo me = myPlace();
                boolean crossed = closing && told.contains(peer.node()) && me != null;
                message.reply(node.seal(peer.node(), crossed ? new ControlMessage.Closing(c.generation(), me.rank()) : c),
                        control);
            }
        } else if (m instanceof ControlMessage.MembershipPending mp) {
            if (assignment != null && mp.generation() == assignment.generation()) {
                changePending.set(true);
            }
        } else if (m instanceof ControlMessage.OpResponse || m instanceof ControlMessage.JoinResponse) {
            collectives.onResponse(m);
        } else if (m instanceof CoordinatorAnnounce c) {
            if (c.generation() >= coordinatorGeneration) {
                coordinatorNode = c.coordinatorNode();
                coordinatorGeneration = c.generation();
                LOG.info("coordinator is now node {} for generation {}", ControlAddresses.shortId(c.coordinatorNode()),
                        c.generation());
                publishView();
            }
        } else {
            LOG.warn("dropped unexpected control message {}", m.getClass().getSimpleName());
        }
    }

    private void onAssignment(Assignment a) {
        long current = assignment == null ? 0 : assignment.generation();
        boolean forMe = a.workers().stream().anyMatch(w -> w.node().equals(node.nodeId()));
        if (a.generation() <= current || !forMe) {
            return; // stale generation, or not ours
        }
        String problem = ControlChecks.assignment(a);
        if (problem != null) {
            LOG.warn("control plane: worker {} dropped a malformed assignment: {}", ControlAddresses.shortId(node.nodeId()), problem);
            return;
        }
        assignment = a;
        abortCause = null;
        departed.clear();
        closingPeers.clear();
        told.clear();
        coordinatorNode = a.coordinatorNode();
        coordinatorGeneration = a.generation();
        vertx.cancelTimer(helloTimer);
        boolean first = !firstAssignment.future().isComplete();
        changePending.set(false);
        publishView();
        status.formed(vertx, view.get());
        observability.metrics.generation(a.generation(), a.workers().size(), first);
        collectives.onAssignment(a, view.get().self());
        if (joining != null) {
            joining.tryComplete(a);
        }
    }

    private void onMembers(MembersChanged change) {
        members = change.members();
        for (String gone : change.removed()) {
            WorkerInfo lost = view.get().worker(gone);
            boolean coordinatorLost = gone.equals(coordinatorNode);
            boolean orderly = closingPeers.contains(gone);
            if (lost != null && assignment != null) {
                departed.add(lost);
                status.lost(vertx, assignment, lost, orderly);
            }
            if ((lost == null && !coordinatorLost) || assignment == null) {
                continue;
            }
            String who = lost != null ? "worker rank " + lost.rank() + " (" + lost.describe() + ")"
                    : "the coordinator (node " + ControlAddresses.shortId(gone) + ")";
            String closed = who + " closed (its program called close); generation " + assignment.generation();
            if (abortCause == null) {
                WorkerLostException cause = new WorkerLostException(orderly ? closed + " is over"
                        : who + " left the cluster; generation " + assignment.generation() + " is aborted",
                        lost != null ? lost.rank() : -1, lost != null ? lost.host() : null);
                if (orderly || closing) {
                    LOG.info(cause.getMessage());
                } else {
                    LOG.warn(cause.getMessage());
                }
                endGeneration(cause, lost != null && !orderly);
            } else if (orderly) {
                // The generation already ended with an earlier loss; this departure is still an orderly one,
                // and a reader of this rank's log should not take it for another failure.
                LOG.info("{} had already ended", closed);
            }
        }
        if (!members.isEmpty() && !members.contains(coordinatorNode)) {
            // Every survivor sees the same member order, so each adopts the same successor (the oldest member)
            // for the next generation at once; its announcement only confirms this.
            coordinatorNode = members.get(0);
            long next = (assignment == null ? 0 : assignment.generation()) + 1;
            coordinatorGeneration = Math.max(coordinatorGeneration, next);
            LOG.info("coordinator is now node {} for generation {}", ControlAddresses.shortId(coordinatorNode), coordinatorGeneration);
        } else if (!members.isEmpty() && !members.get(0).equals(coordinatorNode)) {
            followOlderCluster(members.get(0));
        }
        publishView();
        maybeTakeCoordinatorRole();
    }

    /**
     * Within one cluster the coordinator is always its oldest member; a member older than a coordinator that
     * is still present means two clusters merged (a healed partition, a frozen worker that was continued) and
     * this worker came from the smaller one. Its generation is the smaller side's, which the larger side has
     * left behind: end it, and ask the larger side's coordinator for a place, as a newcomer would.
     */
    private void followOlderCluster(String oldest) {
        if (assignment != null && abortCause == null) {
            KoloException cause = new KoloException("generation " + assignment.generation() + " ended on this rank: "
                    + "its cluster merged into an older one (coordinator node " + ControlAddresses.shortId(oldest) + "); it rejoins there");
            LOG.warn(cause.getMessage());
            endGeneration(cause, false);
        }
        LOG.info("clusters merged: coordinator is now node {} (was {})", ControlAddresses.shortId(oldest), ControlAddresses.shortId(coordinatorNode));
        coordinatorNode = oldest;
    }

    /** @return workers of the current generation that left the cluster, first to go first; any thread */
    public List<WorkerInfo> departed() {
        return List.copyOf(departed);
    }

    /** Ends the current generation on this rank: its collectives (barriers included) fail with {@code cause}. */
    private void endGeneration(KoloException cause, boolean workerLost) {
        abortCause = cause;
        status.ended(vertx, assignment, cause);
        if (cause instanceof WorkerLostException lost) {
            collectives.workerLost(lost);
        } else {
            collectives.abort(cause);
        }
        observability.metrics.aborted(workerLost);
    }

    private void maybeTakeCoordinatorRole() {
        boolean oldest = !members.isEmpty() && members.get(0).equals(node.nodeId());
        if (coordinatorDeployed && !oldest) {
            standDown();
            return;
        }
        if (coordinatorDeployed || !oldest) {
            return;
        }
        coordinatorDeployed = true;
        long lastGeneration = assignment == null ? 0 : assignment.generation();
        coordinatorDeployment = vertx.deployVerticle(new CoordinatorVerticle(node, lastGeneration, assignment, observability,
                collectives::cycleTimeNanos))
                .onFailure(e -> LOG.error("cannot start the coordinator role", e));
    }

    /** A coordinator that is no longer the oldest member (its cluster merged into an older one) stops. */
    private void standDown() {
        coordinatorDeployed = false;
        Future<String> deployment = coordinatorDeployment;
        coordinatorDeployment = null;
        if (deployment != null) {
            LOG.info("coordinator role of node {} stands down: an older member leads the merged cluster",
                    ControlAddresses.shortId(node.nodeId()));
            deployment.onSuccess(id -> vertx.undeploy(id)
                    .onFailure(e -> LOG.warn("coordinator role did not stop cleanly: {}", e.toString())));
        }
    }

    private void publishView() {
        WorkerInfo me = null;
        if (assignment != null) {
            for (WorkerInfo w : assignment.workers()) {
                if (w.node().equals(node.nodeId())) {
                    me = w;
                }
            }
        }
        WorkerView v = new WorkerView(assignment, me, coordinatorNode, coordinatorGeneration, abortCause);
        view.set(v);
        viewListeners.forEach(l -> l.accept(v));
        status.view(vertx, v);
    }

}
