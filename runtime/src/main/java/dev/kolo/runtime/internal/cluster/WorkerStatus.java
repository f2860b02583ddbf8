package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.flight.FlightClock;
import dev.kolo.runtime.internal.flight.FlightRecord;
import dev.kolo.runtime.internal.flight.FlightRecorder;
import dev.kolo.runtime.internal.status.RankProgress;
import dev.kolo.runtime.internal.status.StatusVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker verticle's side of the status page: tells this worker's status board its generation and the
 * generation events it sees, and sends this rank's report to the coordinator once a status interval (over the
 * authenticated control plane; the coordinator's own report stays local). Used on the verticle's context only.
 */
public final class WorkerStatus {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerStatus.class);
    /** Waiting tensors a report names: enough to see a stall, small enough for one control message. */
    private static final int MAX_WAITING = 8;

    private final ClusterNode node;
    private final RankProgress progress;
    private final CollectiveClient collectives;
    private final String transport;
    private final String kernels;
    private final String board;
    private final Supplier<FlightRecorder> flight;
    /** Why the last generation ended on this worker, told with the next one that forms. */
    private String lastEnd;

    /**
     * @param transport how the data plane is carried between hosts ("tcp", "tls"), as the page names it
     * @param kernels   which reduction kernels run
     * @param flight    the worker's flight recorder, whose ops in flight the report sums up
     */
    public WorkerStatus(ClusterNode node, RankProgress progress, CollectiveClient collectives, String transport,
                        String kernels, Supplier<FlightRecorder> flight) {
        this.flight = flight;
        this.collectives = collectives;
        this.node = node;
        this.progress = progress;
        this.transport = transport;
        this.kernels = kernels;
        this.board = node.addresses().status(node.nodeId());
    }

    /** @return the address of a worker's status page, or null when it serves none */
    public static String pageUrl(WorkerInfo w) {
        return w == null || w.metricsPort() == 0 ? null : pageUrl(w.host(), w.metricsPort());
    }

    /** @return the address of the status page served on {@code host}:{@code port} (an IPv6 host in brackets) */
    public static String pageUrl(String host, int port) {
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return "http://" + h + ":" + port + "/";
    }

    void view(Vertx vertx, WorkerView v) {
        JsonArray workers = new JsonArray();
        WorkerInfo coordinator = null;
        if (v.assignment() != null) {
            for (WorkerInfo w : v.assignment().workers()) {
                workers.add(new JsonObject().put("rank", w.rank()).put("host", w.host()).put("pid", w.pid())
                        .put("localRank", w.localRank()).put("statusUrl", pageUrl(w)));
                if (w.node().equals(v.coordinatorNode())) {
                    coordinator = w;
                }
            }
        }
        StatusVerticle.post(vertx, board, new JsonObject().put("kind", "view").put("job", node.config().get(Settings.JOB))
                .put("generation", v.generation()).put("size", v.size()).put("active", v.active())
                .put("coordinator", node.nodeId().equals(v.coordinatorNode()))
                .put("selfRank", v.self() == null ? -1 : v.self().rank())
                .put("coordinatorRank", v.rankOf(v.coordinatorNode())).put("coordinatorUrl", pageUrl(coordinator))
                .put("transport", transport(v)).put("kernels", kernels).put("workers", workers));
    }

    /**
     * How this worker's peers are reached, as the data plane will connect them: through shared memory those of its
     * host (with {@code KOLO_SHM} on), the others over the network ({@code tcp} or {@code tls}).
     */
    private String transport(WorkerView v) {
        if (v.assignment() == null || v.self() == null || !node.config().get(Settings.SHM)) {
            return transport;
        }
        int colocated = 0;
        for (WorkerInfo w : v.assignment().workers()) {
            colocated += w.host().equals(v.self().host()) ? 1 : 0;
        }
        int peers = v.assignment().workers().size() - 1;
        return colocated <= 1 ? transport : colocated - 1 == peers ? "shm" : "shm+" + transport;
    }

    void formed(Vertx vertx, WorkerView v) {
        String reason = lastEnd == null ? "the job formed with " + v.size() + " workers" : lastEnd;
        event(vertx, "formed", v.generation(), v.size(), reason, null);
        lastEnd = null;
    }

    /** This worker's generation ended for a reason other than a lost worker (a regroup, a cluster merge). */
    void ended(Vertx vertx, Assignment a, KoloException cause) {
        if (a == null || cause instanceof WorkerLostException) {
            return; // told by lost(), which the cluster's view of the departure calls
        }
        if (lastEnd == null) {
            lastEnd = "after generation " + a.generation() + " ended: " + cause.getMessage();
        }
        event(vertx, "ended", a.generation(), a.workers().size(), cause.getMessage(), null);
    }

    /**
     * The cluster saw a worker of generation {@code a} leave (whether or not the generation had ended already);
     * {@code closed}: it announced its close first, so it was not lost.
     */
    void lost(Vertx vertx, Assignment a, WorkerInfo w, boolean closed) {
        String why = "rank " + w.rank() + " (" + w.describe() + ") " + (closed ? "closed" : "left the cluster");
        lastEnd = "after " + why;
        event(vertx, closed ? "closed" : "lost", a.generation(), a.workers().size(), why, w.rank());
    }

    private void event(Vertx vertx, String event, long generation, int size, String reason, Integer lostRank) {
        StatusVerticle.post(vertx, board, new JsonObject().put("kind", "event").put("time", System.currentTimeMillis())
                .put("generation", generation).put("event", event).put("size", size).put("reason", reason)
                .put("lostRank", lostRank));
    }

    /** @return the ops this rank has in flight: how many, and the oldest (its name, how far it got, since when) */
    private JsonObject inFlight() {
        FlightRecorder recorder = flight.get();
        if (!recorder.enabled()) {
            return null;
        }
        FlightClock clock = FlightClock.now();
        List<FlightRecord> ops = recorder.inFlight(clock);
        JsonObject summary = new JsonObject().put("count", ops.size());
        if (!ops.isEmpty()) {
            FlightRecord oldest = ops.get(0);
            summary.put("oldest", oldest.label()).put("state", oldest.state().name().toLowerCase(java.util.Locale.ROOT))
                    .put("seconds", oldest.waitedUs(clock.micros(System.nanoTime())) / 1e6);
        }
        return summary;
    }

    /** Sends this rank's report to its own board and, unless it coordinates, to the coordinator's. */
    void report(Vertx vertx, WorkerView v, DeliveryOptions control) {
        if (!v.active() || v.self() == null) {
            return;
        }
        JsonObject report = progress.report();
        // What this rank has waited for longer than an interval: the coordinator's board names the ranks that
        // do not wait for it (stopped, hung, or running something else) in its stall list.
        JsonArray waiting = new JsonArray();
        collectives.forEachWaiting(StatusVerticle.INTERVAL_MILLIS * 1_000_000, MAX_WAITING,
                (name, seconds) -> waiting.add(new JsonObject().put("tensor", name).put("seconds", seconds)));
        report.put("waiting", waiting).put("inFlight", inFlight());
        String text = report.encode();
        if (text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > ControlCodec.MAX_STRING) {
            LOG.debug("status: this rank's report of {} characters does not fit a control message; not sent",
                    text.length());
            return;
        }
        // Its own board shows this rank's row; the coordinator's shows every rank's.
        StatusVerticle.post(vertx, board, new JsonObject().put("kind", "report").put("rank", v.self().rank())
                .put("generation", v.generation()).put("report", text));
        String coordinator = v.coordinatorNode();
        // A coordinator that serves no page (its metrics port off) has no use for the report: nothing is sent.
        if (coordinator != null && !node.nodeId().equals(coordinator) && pageUrl(v.worker(coordinator)) != null) {
            vertx.eventBus().send(node.addresses().coordinator(coordinator),
                    node.seal(coordinator, new ControlMessage.RankStatus(v.generation(), v.self().rank(), text)),
                    control);
        }
    }
}
