package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.cluster.WorkerStatus;
import dev.kolo.runtime.internal.cluster.WorkerVerticle;
import dev.kolo.runtime.internal.cluster.WorkerView;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.flight.FlightDumper;
import dev.kolo.runtime.internal.flight.FlightRecorder;
import dev.kolo.runtime.internal.observability.ChromeTraceTimeline;
import dev.kolo.runtime.internal.observability.HealthServer;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.security.TlsMaterial;
import dev.kolo.runtime.internal.status.RankProgress;
import dev.kolo.runtime.internal.status.StatusPage;
import dev.kolo.runtime.internal.status.StatusVerticle;
import dev.kolo.runtime.internal.wiring.DataPlaneListener;
import dev.kolo.runtime.internal.wiring.DataPlanes;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts one worker: checks, binds, joins and wires its parts in the order that keeps a worker which cannot run
 * out of the job, then waits for its rank. What a step started is closed again if a later one fails.
 */
public final class WorkerBootstrap {
    /**
     * The logger of everything a worker says while it starts, waits and regroups: the facade's name, which
     * users' log settings already name, although the work moved here.
     */
    static final String LOGGER = "dev.kolo.runtime.Kolo";
    private static final Logger LOG = LoggerFactory.getLogger(LOGGER);

    /** Where the metrics port answers with this rank's flight recorder ({@code worker.jar flight dump} asks it). */
    public static final String FLIGHT_PATH = dev.kolo.runtime.FlightReport.PATH;

    private WorkerBootstrap() {
    }

    /**
     * Joins (or forms) the job's cluster and completes the rendezvous.
     *
     * @return the running worker, with its rank
     * @throws KoloException as {@code Kolo.init(KoloConfig)}
     */
    public static WiredWorker start(KoloConfig config) {
        Preflight.checkJvmOptions();
        Preflight.checkSecurity(config);
        Preflight.useKernels(config);
        // Before anything binds or joins: a worker with bad TLS files must not enter the cluster at all.
        TlsMaterial tls = TlsMaterial.load(config);
        if (tls != null) {
            LOG.info("job '{}': event bus and data plane use mutual {} as {}", config.get(Settings.JOB), TlsMaterial.PROTOCOL,
                    tls.subject());
        }
        long deadline = System.nanoTime() + config.get(Settings.RENDEZVOUS_TIMEOUT).toNanos();
        DataPlaneListener dataPlane = DataPlaneListener.bind(config.get(Settings.HOST), config.get(Settings.DATA_PORT));
        Observability observability = new Observability(new KoloMetrics(config.get(Settings.JOB),
                config.get(Settings.METRICS_PORT) != 0));
        int flightOps = config.get(Settings.FLIGHT_RECORDER);
        observability.flight(flightOps == 0 ? FlightRecorder.OFF : new FlightRecorder(flightOps));
        ClusterNode cluster;
        try {
            cluster = ClusterNode.start(config, observability.metrics.registry(), tls);
        } catch (RuntimeException e) {
            dataPlane.close();
            observability.close();
            throw e;
        }
        DataPlanes dataPlanes = null;
        HealthServer health = null;
        try {
            AtomicReference<WorkerView> view = new AtomicReference<>(WorkerView.NONE);
            dataPlanes = new DataPlanes(config, dataPlane, tls);
            RankProgress progress = new RankProgress(observability.metrics);
            String board = cluster.addresses().status(cluster.nodeId());
            StatusPage page = new StatusPage(board);
            cluster.vertx().deployVerticle(new StatusVerticle(board, page)).toCompletionStage().toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            if (config.get(Settings.METRICS_PORT) != 0) {
                // A port the user left at its default moves up to a free one under local discovery.
                int tries = config.get(Settings.DISCOVERY) == Discovery.LOCAL && !config.isSet(Settings.METRICS_PORT)
                        ? Settings.LOCAL_PORT_COUNT : 1;
                health = HealthServer.start(cluster.vertx(), config.get(Settings.METRICS_HOST), config.get(Settings.METRICS_PORT), tries,
                        observability.metrics, () -> view.get().readiness(),
                        router -> {
                            page.route(cluster.vertx(), router);
                            router.get(FLIGHT_PATH).handler(ctx -> flight(ctx, observability));
                        });
            }
            // The worker's page port travels with it, so that every page can link to the coordinator's.
            WorkerInfo self = new WorkerInfo(cluster.nodeId(), config.get(Settings.HOST), dataPlane.port(),
                    health == null ? 0 : health.port(), ProcessHandle.current().pid(), Objects.requireNonNullElse(config.get(Settings.RANK_HINT), -1),
                    -1, -1, -1, dataPlanes.cpuList());
            CollectiveClient collectives = new CollectiveClient(cluster, dataPlanes, dataPlanes.reducer(),
                    "kolo-collectives-" + cluster.nodeId().substring(0, 8), observability);
            AtomicBoolean changePending = new AtomicBoolean();
            WorkerStatus status = new WorkerStatus(cluster, progress, collectives, tls == null ? "tcp" : "tls",
                    dataPlanes.kernelsName(), observability::flight);
            WorkerVerticle verticle = new WorkerVerticle(cluster, self, view, collectives, observability, changePending,
                    status);
            cluster.vertx().deployVerticle(verticle).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            WiredWorker worker = new WiredWorker(config, dataPlane, dataPlanes, cluster, verticle, collectives, view,
                    observability, health, changePending, progress);
            Rendezvous.await(worker, deadline);
            // Before init returns, so that the thread pools the program starts next see the rank's CPUs.
            dataPlanes.bindCpus(worker.view().assignment(), worker.view().self());
            int rank = worker.view().self().rank();
            observability.metrics.bindRank(rank, dataPlanes.kernelsName(), collectives::inFlightCount);
            if (config.get(Settings.TIMELINE) != null) {
                String path = config.get(Settings.TIMELINE).replace("{rank}", Integer.toString(rank));
                observability.timeline(new ChromeTraceTimeline(java.nio.file.Path.of(path), rank));
            }
            if (observability.flight().enabled()) {
                observability.flightDumper(new FlightDumper(observability.flight(),
                        java.nio.file.Path.of(config.get(Settings.FLIGHT_DIR)), config.get(Settings.STALL_WARNING).toNanos(),
                        rank, worker::lastSize, config.get(Settings.JOB), config.get(Settings.HOST)));
            }
            WorkerView v = worker.view();
            LOG.info("rank {} of {} (local {} of {}), generation {}, coordinator rank {}", v.self().rank(), v.size(),
                    v.self().localRank(), v.self().localSize(), v.generation(), v.rankOf(v.coordinatorNode()));
            if (worker.coordinatorStatusUrl() != null) {
                // worker.jar launch picks this line up and prints the address of the job's page.
                LOG.info("job status page {} (this worker's: {})", worker.coordinatorStatusUrl(),
                        worker.statusUrl());
            }
            return worker;
        } catch (RuntimeException e) {
            closeAfterFailure(health, cluster, dataPlanes, dataPlane, observability);
            throw e;
        } catch (Exception e) {
            closeAfterFailure(health, cluster, dataPlanes, dataPlane, observability);
            throw new KoloException("cannot start the control plane: " + e, e);
        }
    }

    /**
     * Answers {@link #FLIGHT_PATH}: writes this rank's flight recorder file now and returns it (the file is written
     * off the event loop).
     */
    private static void flight(RoutingContext ctx, Observability observability) {
        FlightDumper dumper = observability.flightDumper();
        if (dumper == null) {
            ctx.response().setStatusCode(503).end(observability.flight().enabled()
                    ? "this worker has no rank yet: its flight recorder starts with its rank\n"
                    : "this worker's flight recorder is off: KOLO_FLIGHT_RECORDER=0\n");
            return;
        }
        ctx.vertx().executeBlocking(() -> dumper.dump("request", "asked for at " + FLIGHT_PATH))
                .onSuccess(json -> ctx.response().putHeader("Content-Type", "application/json")
                        .putHeader("Cache-Control", "no-store").end(Buffer.buffer(json)))
                .onFailure(e -> ctx.response().setStatusCode(500).end("cannot dump the flight recorder: " + e + "\n"));
    }

    /** Closes what a failed start had started; the parts not yet made are null. */
    private static void closeAfterFailure(HealthServer health, ClusterNode cluster, DataPlanes dataPlanes,
                                          DataPlaneListener dataPlane, Observability observability) {
        if (health != null) {
            health.close();
        }
        cluster.close(Duration.ofSeconds(5));
        if (dataPlanes != null) {
            dataPlanes.close();
        }
        dataPlane.close();
        observability.close();
    }
}
