package dev.kolo.runtime.internal.bootstrap;

import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.access.Departure;
import dev.kolo.runtime.internal.access.WorkerInternals;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.cluster.WorkerStatus;
import dev.kolo.runtime.internal.cluster.WorkerVerticle;
import dev.kolo.runtime.internal.cluster.WorkerView;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.observability.HealthServer;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.status.RankProgress;
import dev.kolo.runtime.internal.wiring.DataPlaneListener;
import dev.kolo.runtime.internal.wiring.DataPlanes;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One running worker's parts, as {@link WorkerBootstrap} wired them: its cluster membership, worker verticle,
 * collective engine, data plane, metrics and health server. The {@code Kolo} facade holds one and delegates to
 * it; closing it closes every part, in the order that lets the others see this worker leave. Thread-safe.
 */
public final class WiredWorker implements WorkerInternals, AutoCloseable {
    private final KoloConfig config;
    private final DataPlaneListener dataPlane;
    private final DataPlanes dataPlanes;
    private final Observability observability;
    private final HealthServer health;
    private final AtomicBoolean changePending;
    private final ClusterNode cluster;
    private final WorkerVerticle verticle;
    private final CollectiveClient collectives;
    private final AtomicReference<WorkerView> view;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** How long a close waits for its peers to note it (above the control plane's send timeout of 2 s). */
    private static final long CLOSING_NOTICE_MILLIS = 3000;
    private final RankProgress progress;

    WiredWorker(KoloConfig config, DataPlaneListener dataPlane, DataPlanes dataPlanes, ClusterNode cluster,
                WorkerVerticle verticle, CollectiveClient collectives, AtomicReference<WorkerView> view,
                Observability observability, HealthServer health, AtomicBoolean changePending, RankProgress progress) {
        this.progress = progress;
        this.changePending = changePending;
        this.observability = observability;
        this.health = health;
        this.config = config;
        this.dataPlane = dataPlane;
        this.dataPlanes = dataPlanes;
        this.cluster = cluster;
        this.verticle = verticle;
        this.collectives = collectives;
        this.view = view;
    }

    /**
     * Lets the other workers know this one closes in order before it leaves (bounded: a peer that does not answer
     * only reports the close as a lost worker).
     */
    private void announceClosing() {
        try {
            verticle.announceClosing().toCompletionStage().toCompletableFuture()
                    .get(CLOSING_NOTICE_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException late) {
            // The close goes on: the peers see this worker leave either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the configuration this worker runs with */
    public KoloConfig config() {
        return config;
    }

    /** @return the engine that runs this worker's collectives */
    public CollectiveClient collectives() {
        return collectives;
    }

    /**
     * @return this worker's view of its generation
     * @throws IllegalStateException if the worker has no rank (it is closed or was never assigned one)
     */
    public WorkerView view() {
        WorkerView v = view.get();
        if (v.self() == null) {
            throw new IllegalStateException("this worker has no rank: it is closed or was never assigned one");
        }
        return v;
    }

    /** @return the size of the last generation this worker saw, whether or not it still has a rank in it */
    int lastSize() {
        return view.get().size();
    }

    /** @return this worker's cluster membership */
    public ClusterNode clusterNode() {
        return cluster;
    }

    WorkerVerticle verticle() {
        return verticle;
    }

    /** @return this worker's meter registry (Prometheus), served on {@code /metrics} */
    public MeterRegistry meterRegistry() {
        return observability.metrics.registry();
    }

    /** @return the port of the metrics and health endpoint, or 0 when it is disabled */
    public int metricsPort() {
        return health == null ? 0 : health.port();
    }

    @Override
    public RankProgress progress() {
        return progress;
    }

    /** @return the address of this worker's status page, or null when the metrics port is off */
    public String statusUrl() {
        if (health == null) {
            return null;
        }
        String bound = config.get(Settings.METRICS_HOST);
        return WorkerStatus.pageUrl(bound.equals("0.0.0.0") || bound.equals("::") ? config.get(Settings.HOST) : bound,
                health.port());
    }

    /** @return the address of the coordinator's status page (the whole job's), or null if it serves none */
    public String coordinatorStatusUrl() {
        WorkerView v = view.get();
        if (v.assignment() == null) {
            return null;
        }
        for (dev.kolo.runtime.internal.control.WorkerInfo w : v.assignment().workers()) {
            if (w.node().equals(v.coordinatorNode())) {
                return WorkerStatus.pageUrl(w);
            }
        }
        return null;
    }

    /** @return which reduction kernels run: "native" (SIMD) or "java" (the fallback) */
    public String kernelsName() {
        return dataPlanes.kernelsName();
    }

    /** @return true when workers wait to join this job (the coordinator said so) */
    public boolean changePending() {
        return changePending.get();
    }

    /**
     * Leaves the current generation and waits for a new one that includes this worker.
     *
     * @throws dev.kolo.runtime.KoloException as {@code Kolo.rejoin()}
     */
    public void rejoin() {
        Regroup.await(this);
    }

    @Override
    public HazelcastInstance hazelcast() {
        return cluster.hazelcast();
    }

    @Override
    public List<Departure> departed() {
        return verticle.departed().stream().map(w -> new Departure(w.rank(), w.host())).toList();
    }

    /**
     * Undeploys the worker's verticle (and the coordinator it deployed) before the rest: they post facts to the status
     * board, and closing Vert.x undeploys every verticle at once, so a fact posted just then could reach the board's
     * address after its consumer went, which Vert.x logs as a WARN a user would read. Bounded; the close goes on
     * either way.
     */
    private void stopPostingStatus() {
        try {
            cluster.vertx().undeploy(verticle.deploymentID()).toCompletionStage().toCompletableFuture()
                    .get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // Closing Vert.x next undeploys it anyway.
        }
    }

    /** Leaves the job: other workers see this worker leave. Idempotent; bounded in time. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            announceClosing();
            observability.stopFlight(); // the ops a close fails are no news: a failure before it is written now
            collectives.close();
            if (health != null) {
                health.close();
            }
            stopPostingStatus();
            cluster.close(Duration.ofSeconds(10));
            dataPlanes.close();
            dataPlane.close();
            observability.close();
        }
    }
}
