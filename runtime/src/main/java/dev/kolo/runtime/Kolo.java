package dev.kolo.runtime;

import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.cluster.WorkerVerticle;
import dev.kolo.runtime.internal.cluster.WorkerView;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.dataplane.DataPlaneListener;
import dev.kolo.runtime.internal.dataplane.DataPlanes;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.engine.Deadlines;
import dev.kolo.runtime.internal.observability.ChromeTraceTimeline;
import dev.kolo.runtime.internal.observability.HealthServer;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.security.TlsMaterial;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's handle on a Kolo job. {@link #init(KoloConfig)} joins the job's cluster, waits until the
 * expected workers are present and returns once this worker has its rank. Several handles may live in one
 * JVM, each its own cluster member. Thread-safe.
 *
 * <p><b>Completion callbacks.</b> The future of an asynchronous collective completes on the thread that drove
 * the op to its end: the worker's collective thread, or any thread blocked in a Kolo call or waiting on a Kolo
 * future (such a thread drives the collective engine itself), or, when a generation ends, the thread that
 * ended it; a callback registered on a future that is already done runs on the registering thread. A callback
 * never runs while its thread holds the collective engine, so it may call another collective, even a blocking
 * one ({@code allreduceAsync("a", t, SUM).thenApply(x -> kolo.allreduce("b", u, SUM))} works: the inner call
 * drives the engine itself). While a callback runs, though, its thread drives nothing else, so a callback that
 * takes long delays the asynchronous ops of this rank: chain collectives with {@code thenCompose}, and run long
 * work with {@code thenApplyAsync} on an executor of your own.
 *
 * <p><b>Interrupts.</b> A thread interrupted while it waits in a blocking collective or barrier (or in a Kolo
 * future's {@code join}) stops waiting at once, or, if it is in the middle of an agreement round or an op on
 * the data plane (its peers are in it too), as soon as that ends: the call throws a
 * {@link KoloInterruptedException} (cause: an {@link InterruptedException}) with the thread's interrupt status
 * still set; a future's {@code get} throws the {@code InterruptedException} itself. The op is not withdrawn,
 * since the other ranks may already be running it: it stays submitted, runs on every rank once all have
 * submitted it (the collective thread drives it meanwhile), its future completes then and its result on this
 * rank is discarded; its name is in flight until then. No thread spins while it waits: a waiting thread polls
 * for at most a millisecond, then parks.
 */
public final class Kolo implements AutoCloseable {
    static {
        // Kolo's checkpoint and elastic modules reach the cluster member through the SPI, not a public method.
        dev.kolo.runtime.spi.ModuleAccess.provide(new dev.kolo.runtime.spi.ModuleAccess.Accessor() {
            @Override
            public com.hazelcast.core.HazelcastInstance hazelcast(Kolo kolo) {
                return kolo.cluster.hazelcast();
            }

            @Override
            public List<dev.kolo.runtime.spi.ModuleAccess.Departure> departed(Kolo kolo) {
                return kolo.worker.departed().stream()
                        .map(w -> new dev.kolo.runtime.spi.ModuleAccess.Departure(w.rank(), w.host())).toList();
            }
        });
    }

    private static final Logger LOG = LoggerFactory.getLogger(Kolo.class);
    /** The notice that a program started on its own is a job of one is given once per process. */
    private static final AtomicBoolean JOB_OF_ONE_SAID = new AtomicBoolean();

    private final KoloConfig config;
    private final DataPlaneListener dataPlane;
    private final DataPlanes dataPlanes;
    private final Observability observability;
    private final HealthServer health;
    private final java.util.concurrent.atomic.AtomicBoolean changePending;
    private final AtomicBoolean leaving = new AtomicBoolean();
    private final ClusterNode cluster;
    private final WorkerVerticle worker;
    private final CollectiveClient collectives;

    /** For tests: the size of this rank's mirror of the coordinator's response cache. */
    int cachedSpecs() {
        return collectives.cachedSpecs();
    }
    private final AtomicReference<WorkerView> view;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Kolo(KoloConfig config, DataPlaneListener dataPlane, DataPlanes dataPlanes, ClusterNode cluster,
                 WorkerVerticle worker, CollectiveClient collectives, AtomicReference<WorkerView> view,
                 Observability observability, HealthServer health,
                 java.util.concurrent.atomic.AtomicBoolean changePending) {
        this.changePending = changePending;
        this.observability = observability;
        this.health = health;
        this.config = config;
        this.dataPlane = dataPlane;
        this.dataPlanes = dataPlanes;
        this.cluster = cluster;
        this.worker = worker;
        this.collectives = collectives;
        this.view = view;
    }

    /** Chooses the process's kernels before joining: a worker that cannot use the ones asked for never joins. */
    private static void useKernels(KoloConfig config) {
        try {
            dev.kolo.kernels.Kernels.configure(config.kernels(), config.kernelsIsa());
        } catch (IllegalStateException e) {
            throw new KoloConfigurationException(e.getMessage() + "; set KOLO_KERNELS=java or auto to use the Java kernels");
        }
    }

    /**
     * Joins the job described by the {@code KOLO_*} environment variables and {@code -Dkolo.*} properties, which
     * {@code worker.jar launch} sets for every process it starts. With no {@code KOLO_NP} (a program started on
     * its own) the job is this one worker, and the first such call of the process says so in the log.
     *
     * @throws KoloException as {@link #init(KoloConfig)}
     * @throws IllegalArgumentException naming a setting whose value is not accepted
     */
    public static Kolo init() {
        KoloConfig config = KoloConfig.fromEnvironment();
        if (!config.isSet(Settings.NP) && !config.elastic() && JOB_OF_ONE_SAID.compareAndSet(false, true)) {
            LOG.info("KOLO_NP is not set: this process is a job of one worker. To run N workers, start it with "
                    + "'java -jar worker.jar launch -np N -- COMMAND' (or set KOLO_NP and the other KOLO_* settings)");
        }
        return init(config);
    }


    /**
     * Joins (or forms) the job's cluster and completes the rendezvous.
     *
     * @throws KoloException if the job has no secret outside LOCAL discovery (and is not marked insecure), a
     *                       port is taken, the cluster cannot be joined, the coordinator refuses this
     *                       worker, or the rendezvous does not complete within
     *                       {@link KoloConfig#rendezvousTimeout()} (the message names who arrived)
     */
    public static Kolo init(KoloConfig config) {
        checkSecurity(config);
        useKernels(config);
        // Before anything binds or joins: a worker with bad TLS files must not enter the cluster at all.
        TlsMaterial tls = TlsMaterial.load(config);
        if (tls != null) {
            LOG.info("job '{}': event bus and data plane use mutual {} as {}", config.jobName(), TlsMaterial.PROTOCOL,
                    tls.subject());
        }
        long deadline = System.nanoTime() + config.rendezvousTimeout().toNanos();
        DataPlaneListener dataPlane = DataPlaneListener.bind(config.host(), config.dataPort());
        Observability observability = new Observability(new KoloMetrics(config.jobName(),
                config.metricsPort() != 0));
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
            WorkerInfo self = new WorkerInfo(cluster.nodeId(), config.host(), dataPlane.port(),
                    ProcessHandle.current().pid(), config.rankHint().orElse(-1), -1, -1, -1);
            dataPlanes = new DataPlanes(config, dataPlane, tls);
            CollectiveClient collectives = new CollectiveClient(cluster, dataPlanes, dataPlanes.reducer(),
                    "kolo-collectives-" + cluster.nodeId().substring(0, 8), observability);
            java.util.concurrent.atomic.AtomicBoolean changePending = new java.util.concurrent.atomic.AtomicBoolean();
            WorkerVerticle worker = new WorkerVerticle(cluster, self, view, collectives, observability, changePending);
            cluster.vertx().deployVerticle(worker).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            if (config.metricsPort() != 0) {
                // A port the user left at its default moves up to a free one under local discovery.
                int tries = config.discovery() == Discovery.LOCAL && !config.isSet(Settings.METRICS_PORT)
                        ? KoloConfig.LOCAL_PORT_COUNT : 1;
                health = HealthServer.start(cluster.vertx(), config.host(), config.metricsPort(), tries,
                        observability.metrics, () -> view.get().readiness());
            }
            Kolo kolo = new Kolo(config, dataPlane, dataPlanes, cluster, worker, collectives, view, observability,
                    health, changePending);
            kolo.awaitRendezvous(deadline);
            observability.metrics.bindRank(kolo.rank(), dataPlanes.kernelsName(), collectives::inFlightCount);
            if (config.timeline() != null) {
                String path = config.timeline().replace("{rank}", Integer.toString(kolo.rank()));
                observability.timeline(new ChromeTraceTimeline(java.nio.file.Path.of(path), kolo.rank()));
            }
            LOG.info("rank {} of {} (local {} of {}), generation {}, coordinator rank {}", kolo.rank(), kolo.size(),
                    kolo.localRank(), kolo.localSize(), kolo.generation(), kolo.coordinatorRank());
            return kolo;
        } catch (RuntimeException e) {
            if (health != null) {
                health.close();
            }
            cluster.close(Duration.ofSeconds(5));
            closeQuietly(dataPlanes);
            dataPlane.close();
            observability.close();
            throw e;
        } catch (Exception e) {
            if (health != null) {
                health.close();
            }
            cluster.close(Duration.ofSeconds(5));
            closeQuietly(dataPlanes);
            dataPlane.close();
            observability.close();
            throw new KoloException("cannot start the control plane: " + e, e);
        }
    }

    /**
     * Outside LOCAL discovery the worker's ports face a network: without a secret anyone who reaches them
     * could join the job, send it control messages and open data connections. Refuse that unless the user
     * says the network is trusted.
     */
    static void checkSecurity(KoloConfig config) {
        if (config.hasJobSecret()) {
            LOG.info("job '{}': control messages and data connections are authenticated with KOLO_JOB_SECRET",
                    config.jobName());
            return;
        }
        if (config.discovery() == Discovery.LOCAL) {
            return;
        }
        if (!config.insecure()) {
            throw new KoloConfigurationException("discovery '" + config.discovery().name().toLowerCase(java.util.Locale.ROOT)
                    + "' without KOLO_JOB_SECRET: anyone who can reach this worker's ports could join job '"
                    + config.jobName() + "' and send it commands; set the same KOLO_JOB_SECRET on every worker (on "
                    + "Kubernetes from a Secret; at least " + KoloConfig.MIN_SECRET_LENGTH + " random characters, "
                    + "e.g. $(head -c 32 /dev/urandom | base64)), or set KOLO_INSECURE=true (--insecure) on a "
                    + "network where everyone is trusted");
        }
        LOG.warn("job '{}' runs without authentication (KOLO_INSECURE=true): anyone who can reach its cluster, "
                + "event-bus and data ports can join it and send it commands", config.jobName());
    }

    private static void closeQuietly(DataPlanes planes) {
        if (planes != null) {
            planes.close();
        }
    }

    /** How often a worker waiting outside a job at its maximum says that it still waits. */
    static final long WAITING_NOTICE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** How often the rendezvous looks at the coordinator's last answer while it waits for an assignment. */
    private static final long RENDEZVOUS_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Waits for the first assignment. A worker that the coordinator tells to wait outside a job running at its
     * maximum waits up to {@code KOLO_ELASTIC_TIMEOUT} instead of the rendezvous timeout, says so once and then
     * every 30 s, and gives up at once if the job ends (it is alone in the cluster).
     */
    private void awaitRendezvous(long deadline) {
        CompletableFuture<Assignment> first = worker.firstAssignment().toCompletionStage().toCompletableFuture();
        long start = System.nanoTime();
        long end = deadline;
        long waitingSince = 0;
        long nextNotice = 0;
        long nextProgress = start + WAITING_NOTICE_NANOS;
        while (true) {
            try {
                Deadlines.await(first, Math.min(end, System.nanoTime() + RENDEZVOUS_POLL_NANOS));
                return;
            } catch (Deadlines.KoloTimeout pollAgain) {
                // look at the coordinator's last answer below
            }
            long now = System.nanoTime();
            HelloReply reply = lastHelloReply();
            if (reply != null && reply.waiting()) {
                String why = reply.waitingReason();
                if (waitingSince == 0) {
                    waitingSince = now;
                    end = now + config.elasticTimeout().toNanos();
                    nextNotice = now + WAITING_NOTICE_NANOS;
                    LOG.warn("waiting for a place: {}; gives up after {} s (KOLO_ELASTIC_TIMEOUT)", why,
                            config.elasticTimeout().toSeconds());
                } else if (now >= nextNotice) {
                    nextNotice += WAITING_NOTICE_NANOS;
                    LOG.warn("still waiting for a place after {} s of at most {} s: {}",
                            TimeUnit.NANOSECONDS.toSeconds(now - waitingSince), config.elasticTimeout().toSeconds(),
                            why);
                }
            }
            if (waitingSince == 0 && now >= nextProgress) {
                // A long rendezvous is not silent: who is here so far, how long, and the deadline.
                nextProgress += WAITING_NOTICE_NANOS;
                LOG.info("rendezvous of job '{}': {} of {} workers after {} s of at most {} s (KOLO_RENDEZVOUS_TIMEOUT)",
                        config.jobName(), reply == null ? "no coordinator answer yet, so unknown" : reply.arrived().size(),
                        config.np(), TimeUnit.NANOSECONDS.toSeconds(now - start), config.rendezvousTimeout().toSeconds());
            }
            if (waitingSince != 0 && cluster.memberAddresses().size() <= 1) {
                throw new KoloException("job '" + config.jobName() + "' ended while this worker waited for a place "
                        + "(it ran at its maximum, KOLO_MAX_NP=" + config.maxNp() + "): there is no job to join");
            }
            if (now >= end) {
                if (waitingSince != 0) {
                    throw new KoloException("no place freed in job '" + config.jobName() + "' within "
                            + config.elasticTimeout().toSeconds() + " s (KOLO_ELASTIC_TIMEOUT): it runs at its "
                            + "maximum, KOLO_MAX_NP=" + config.maxNp() + "; raise KOLO_MAX_NP to run more workers, "
                            + "or stop this one");
                }
                throw new KoloException(rendezvousTimeoutMessage());
            }
        }
    }

    /** @return the coordinator's last answer to this worker's hello, or null when there is none to report */
    private HelloReply lastHelloReply() {
        try {
            return worker.lastHelloReply().toCompletionStage().toCompletableFuture().get(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return null; // the worker's context is busy or closing: report without the coordinator's view
        }
    }

    private String rendezvousTimeoutMessage() {
        HelloReply reply = lastHelloReply();
        StringBuilder m = new StringBuilder("rendezvous of job '").append(config.jobName()).append("' timed out after ")
                .append(config.rendezvousTimeout().toSeconds()).append(" s: ");
        if (reply != null) {
            int missing = Math.max(0, config.np() - reply.arrived().size());
            m.append(reply.arrived().size()).append(" of ").append(config.np()).append(" workers arrived (")
                    .append(String.join(", ", reply.arrived())).append("); start the missing ").append(missing)
                    .append(missing == 1 ? " worker" : " workers");
        } else {
            m.append("no coordinator answered; cluster members seen: ").append(cluster.memberAddresses())
                    .append("; start the other workers of the job");
        }
        List<String> unseen = unseenMembers();
        if (!unseen.isEmpty()) {
            m.append("; members never reached: ").append(String.join(", ", unseen))
                    .append(" (check KOLO_MEMBERS and that workers run there)");
        }
        m.append(", or lower KOLO_NP (--np), or raise KOLO_RENDEZVOUS_TIMEOUT");
        // Workers with different secrets form different clusters: say so, it is the one cause not visible here.
        m.append(config.hasJobSecret() ? "; workers with another KOLO_JOB_SECRET (or none) form a separate cluster "
                + "and are never counted: set the same KOLO_JOB_SECRET on every worker"
                : "; this worker has no KOLO_JOB_SECRET and never meets workers that have one");
        if (config.tls()) {
            // Hazelcast (no TLS) lets them meet; only the TLS event bus keeps them apart: name the cause here too.
            m.append("; with TLS, workers whose certificates do not chain to each other's KOLO_TLS_CA, or that run "
                    + "without TLS, never exchange control messages (the log shows the failed TLS handshakes): give "
                    + "every worker KOLO_TLS_CERT/KOLO_TLS_KEY signed by the one job CA in KOLO_TLS_CA");
        }
        long rejected = cluster.rejectedControlMessages();
        if (rejected > 0) {
            m.append("; ").append(rejected).append(" control messages to this worker failed authentication (see "
                    + "the log)");
        }
        return m.toString();
    }

    private List<String> unseenMembers() {
        List<String> unseen = new ArrayList<>();
        if (config.discovery() == Discovery.MEMBERS) {
            List<String> seen = cluster.memberAddresses();
            for (String m : config.members()) {
                MemberAddress a = MemberAddress.parse(m);
                boolean found = seen.stream().anyMatch(s -> s.endsWith(":" + a.port())
                        && (s.startsWith(a.host() + ":") || sameHost(a.host(), s.substring(0, s.lastIndexOf(':')))));
                if (!found) {
                    unseen.add(a.toString());
                }
            }
        }
        return unseen;
    }

    private static boolean sameHost(String a, String b) {
        try {
            return java.net.InetAddress.getByName(a).equals(java.net.InetAddress.getByName(b));
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** @return this worker's rank in the current generation, 0..size-1 */
    public int rank() {
        return requireView().self().rank();
    }

    /** @return the number of workers in the current generation */
    public int size() {
        return requireView().size();
    }

    /** @return this worker's index among the workers on its host */
    public int localRank() {
        return requireView().self().localRank();
    }

    /** @return the number of workers on this worker's host */
    public int localSize() {
        return requireView().self().localSize();
    }

    /** @return the rendezvous generation: it grows each time the job's membership is agreed anew */
    public long generation() {
        return requireView().generation();
    }

    /**
     * @return the rank, in the current generation, of the worker holding the coordinator role, or -1 if the
     *         coordinator is not part of it (it left and a new one took over)
     */
    public int coordinatorRank() {
        WorkerView v = requireView();
        return v.rankOf(v.coordinatorNode());
    }

    /** @return the generation the current coordinator presides over (grows when a new one takes over) */
    public long coordinatorGeneration() {
        return requireView().coordinatorGeneration();
    }

    /** @return the cluster node id of the current coordinator */
    String coordinatorNode() {
        return requireView().coordinatorNode();
    }

    /** @return this worker's cluster membership */
    ClusterNode clusterNode() {
        return cluster;
    }

    /** @return this worker's cluster node id */
    String nodeId() {
        return cluster.nodeId();
    }

    /**
     * @return this worker's meter registry (Prometheus), where applications and the other Kolo modules add
     *         their own meters (training loss, checkpoint times) to be served on {@code /metrics}
     */
    public io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return observability.metrics.registry();
    }

    /** @return the port of the metrics and health endpoint, or 0 when it is disabled */
    public int metricsPort() {
        return health == null ? 0 : health.port();
    }

    /** @return which reduction kernels run: "native" (SIMD) or "java" (the fallback) */
    public String kernels() {
        return dataPlanes.kernelsName();
    }

    /** @return the configuration this worker runs with */
    public KoloConfig config() {
        return config;
    }

    /**
     * Waits until every rank of the current generation has called {@code barrier()}.
     *
     * @throws WorkerLostException if a worker of the generation is lost meanwhile
     * @throws KoloException       if the barrier does not complete within {@link KoloConfig#opTimeout()}
     */
    public void barrier() {
        synchronized (barrierLock) { // the n-th barrier of every rank meets the n-th of the others
            try {
                collectives.await(collectives.submit(BARRIER, EMPTY, EMPTY, true),
                        System.nanoTime() + config.opTimeout().toNanos());
            } catch (Deadlines.KoloTimeout e) {
                throw new KoloException("barrier did not complete within " + config.opTimeout().toSeconds()
                        + " s (KOLO_OP_TIMEOUT): some rank never reached it; the coordinator logs which");
            }
        }
    }

    /**
     * A barrier is an allreduce of nothing: it completes once every rank has submitted it, and after the first
     * time every rank agrees on it in one agreement round over the data plane.
     */
    private static final OpSpec BARRIER = new OpSpec("kolo.barrier", OpType.ALLREDUCE, DType.UINT8, new long[] {0},
            ReduceOp.MAX, 1.0, 1.0, 0, null);
    private static final Tensor EMPTY = Tensor.allocate(DType.UINT8, 0);
    private final Object barrierLock = new Object();

    // ---------------------------------------------------------------- elastic membership

    /**
     * Regroups: leaves the current generation (if it still runs on this rank, it ends here and pending
     * collectives fail) and waits for a new generation that includes this worker. Call it on every rank
     * after a {@link WorkerLostException}, or at a commit where {@link #membershipChangePending()} was agreed.
     * Afterwards {@link #rank()}, {@link #size()} and {@link #generation()} describe the new generation.
     *
     * @throws KoloException if the job is not elastic, if this worker is refused, or if no generation with
     *                       at least {@code KOLO_MIN_NP} workers and a strict majority of the last one forms
     *                       within {@code KOLO_ELASTIC_TIMEOUT}
     */
    public void rejoin() {
        if (!config.elastic()) {
            throw new KoloException("rejoin needs an elastic job: set KOLO_MIN_NP below KOLO_MAX_NP (this job has "
                    + "np=" + config.np() + " fixed)");
        }
        long start = System.nanoTime();
        long deadline = start + config.elasticTimeout().toNanos();
        long nextNotice = start + WAITING_NOTICE_NANOS;
        CompletableFuture<Assignment> next = worker.rejoin().toCompletionStage().toCompletableFuture();
        while (true) {
            try {
                Deadlines.await(next, Math.min(deadline, nextNotice));
                break;
            } catch (Deadlines.KoloTimeout e) {
                HelloReply reply = lastHelloReply();
                String present = reply == null ? "no coordinator answered"
                        : reply.arrived().size() + " workers present (" + String.join(", ", reply.arrived()) + ")";
                String needs = "a new generation needs at least KOLO_MIN_NP=" + config.minNp()
                        + " workers and a strict majority of the last one's " + lastSize();
                long now = System.nanoTime();
                if (now >= deadline) {
                    throw new KoloException("no new generation formed within " + config.elasticTimeout().toSeconds()
                            + " s (KOLO_ELASTIC_TIMEOUT): " + present + "; " + needs + "; start more workers");
                }
                nextNotice += WAITING_NOTICE_NANOS;
                LOG.warn("waiting for a new generation for {} s of at most {} s (KOLO_ELASTIC_TIMEOUT): {}; {}",
                        TimeUnit.NANOSECONDS.toSeconds(now - start), config.elasticTimeout().toSeconds(), present,
                        needs);
            }
        }
        leaving.set(false);
        LOG.info("rejoined: rank {} of {}, generation {}", rank(), size(), generation());
    }

    private int lastSize() {
        WorkerView v = view.get();
        return v.size();
    }

    /**
     * @return true when workers wait to join this job, or this worker asked to leave: the ranks should
     *         agree on it at their next commit (it reaches ranks at different moments) and then
     *         {@link #rejoin()} together
     */
    public boolean membershipChangePending() {
        return changePending.get() || leaving.get();
    }

    /**
     * Marks this worker as leaving (e.g. on SIGTERM): {@link #membershipChangePending()} turns true here, so
     * the next commit's agreement lets every rank see it; then this worker closes and the others regroup.
     */
    public void requestLeave() {
        leaving.set(true);
    }

    /** @return true after {@link #requestLeave()} */
    public boolean leaving() {
        return leaving.get();
    }


    // ---------------------------------------------------------------- collectives

    /** Blocking {@link #allreduceAsync(String, Tensor, ReduceOp)}. */
    public Tensor allreduce(String name, Tensor t, ReduceOp op) {
        return waitFor(allreduce(name, t, op, 1.0, 1.0, null, true), "allreduce", name);
    }

    /**
     * Blocking allreduce with scaling: every rank's input is multiplied by {@code prescale} before the
     * reduction and the result by {@code postscale} after it.
     */
    public Tensor allreduce(String name, Tensor t, ReduceOp op, double prescale, double postscale) {
        return waitFor(allreduce(name, t, op, prescale, postscale, null, true), "allreduce", name);
    }

    /**
     * Reduces {@code t} element-wise across all ranks; every rank receives the same result, byte for byte.
     *
     * @param name identifies the op across ranks: every rank submits the same name with the same dtype,
     *             shape and op, else all of them get a {@link CollectiveMismatchException}
     */
    public CompletableFuture<Tensor> allreduceAsync(String name, Tensor t, ReduceOp op) {
        return allreduceAsync(name, t, op, 1.0, 1.0);
    }

    /** Asynchronous {@link #allreduce(String, Tensor, ReduceOp, double, double)}. */
    public CompletableFuture<Tensor> allreduceAsync(String name, Tensor t, ReduceOp op, double prescale,
                                                    double postscale) {
        return allreduce(name, t, op, prescale, postscale, null, false);
    }

    /** @param blocking the caller waits for the result at once (and drives the collective engine meanwhile) */
    private CompletableFuture<Tensor> allreduce(String name, Tensor t, ReduceOp op, double prescale, double postscale,
                                                Tensor output, boolean blocking) {
        requireOp(name, t);
        java.util.Objects.requireNonNull(op, "op");
        return collectives.submit(new OpSpec(name, OpType.ALLREDUCE, t.dtype(), t.shape(), op, prescale, postscale,
                0, null), t, output, blocking);
    }

    /**
     * Allreduce that writes the result back into {@code t} (the input is consumed): no result tensor is
     * allocated and nothing is copied beyond what fusion needs. For gradients reduced every step.
     */
    public CompletableFuture<Tensor> allreduceInPlaceAsync(String name, Tensor t, ReduceOp op, double prescale,
                                                           double postscale) {
        return allreduce(name, t, op, prescale, postscale, t, false);
    }

    /** Blocking {@link #allreduceInPlaceAsync}; returns {@code t}, which now holds the result. */
    public Tensor allreduceInPlace(String name, Tensor t, ReduceOp op) {
        return waitFor(allreduce(name, t, op, 1.0, 1.0, t, true), "allreduce", name);
    }

    /**
     * Allreduces several tensors as one group: they are negotiated under {@code name/0}, {@code name/1}, ...
     * and run together, in one fused buffer where they fit the fusion threshold, once every member is ready
     * on every rank. Results are in input order.
     */
    public List<Tensor> groupedAllreduce(String name, List<Tensor> ts, ReduceOp op) {
        requireName(name);
        List<CompletableFuture<Tensor>> futures = new ArrayList<>(ts.size());
        if (ts.size() > OpSpec.MAX_GROUP) {
            throw new IllegalArgumentException("a group holds at most " + OpSpec.MAX_GROUP + " tensors; split it");
        }
        java.util.Objects.requireNonNull(op, "op");
        int group = ts.size() > 1 ? ts.size() : 0;
        for (int i = 0; i < ts.size(); i++) {
            Tensor t = ts.get(i);
            requireOp(name + "/" + i, t);
            futures.add(collectives.submit(new OpSpec(name + "/" + i, OpType.ALLREDUCE, t.dtype(), t.shape(), op, 1.0,
                    1.0, 0, null, group), t, null, i == ts.size() - 1));
        }
        List<Tensor> results = new ArrayList<>(ts.size());
        for (int i = 0; i < futures.size(); i++) {
            results.add(waitFor(futures.get(i), "grouped allreduce", name + "/" + i));
        }
        return results;
    }

    /** Blocking {@link #allgatherAsync(String, Tensor)}. */
    public Tensor allgather(String name, Tensor t) {
        return waitFor(allgather(name, t, true), "allgather", name);
    }

    /** Concatenates every rank's {@code t} along dim 0 in rank order; dim 0 may differ between ranks. */
    public CompletableFuture<Tensor> allgatherAsync(String name, Tensor t) {
        return allgather(name, t, false);
    }

    private CompletableFuture<Tensor> allgather(String name, Tensor t, boolean blocking) {
        requireOp(name, t);
        requireDims("allgather", t);
        return collectives.submit(new OpSpec(name, OpType.ALLGATHER, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0,
                null), t, null, blocking);
    }

    /** Blocking {@link #broadcastAsync(String, Tensor, int)}. */
    public Tensor broadcast(String name, Tensor t, int rootRank) {
        return waitFor(broadcast(name, t, rootRank, true), "broadcast", name);
    }

    /** Every rank receives a copy of the root's {@code t}; a non-root rank's input is left as it was. */
    public CompletableFuture<Tensor> broadcastAsync(String name, Tensor t, int rootRank) {
        return broadcast(name, t, rootRank, false);
    }

    private CompletableFuture<Tensor> broadcast(String name, Tensor t, int rootRank, boolean blocking) {
        requireOp(name, t);
        int size = size();
        if (rootRank < 0 || rootRank >= size) {
            throw new IllegalArgumentException("broadcast '" + name + "': root rank " + rootRank
                    + " is not a rank of this job (0.." + (size - 1) + ")");
        }
        return collectives.submit(new OpSpec(name, OpType.BROADCAST, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1,
                rootRank, null), t, null, blocking);
    }

    /** Blocking {@link #reducescatterAsync(String, Tensor, ReduceOp)}. */
    public Tensor reducescatter(String name, Tensor t, ReduceOp op) {
        return waitFor(reducescatter(name, t, op, true), "reducescatter", name);
    }

    /**
     * Reduces {@code t} across ranks and gives rank r its block of dim 0; the first {@code rows % size}
     * ranks get one extra row.
     */
    public CompletableFuture<Tensor> reducescatterAsync(String name, Tensor t, ReduceOp op) {
        return reducescatter(name, t, op, false);
    }

    private CompletableFuture<Tensor> reducescatter(String name, Tensor t, ReduceOp op, boolean blocking) {
        requireOp(name, t);
        requireDims("reducescatter", t);
        java.util.Objects.requireNonNull(op, "op");
        return collectives.submit(new OpSpec(name, OpType.REDUCESCATTER, t.dtype(), t.shape(), op, 1, 1, 0, null),
                t, null, blocking);
    }

    /** Blocking {@link #alltoallAsync(String, Tensor, int[])}. */
    public Tensor alltoall(String name, Tensor t, int[] splits) {
        return waitFor(alltoall(name, t, splits, true), "alltoall", name);
    }

    /**
     * Sends {@code splits[r]} consecutive rows of dim 0 to rank r and concatenates what every rank sent
     * here, in rank order.
     *
     * @param splits rows for each rank, summing to dim 0; {@code null} splits dim 0 equally
     */
    public CompletableFuture<Tensor> alltoallAsync(String name, Tensor t, int[] splits) {
        return alltoall(name, t, splits, false);
    }

    private CompletableFuture<Tensor> alltoall(String name, Tensor t, int[] splits, boolean blocking) {
        requireOp(name, t);
        requireDims("alltoall", t);
        int size = size();
        long rows = t.shape()[0];
        long[] s = new long[size];
        if (splits == null) {
            if (rows % size != 0) {
                throw new IllegalArgumentException("alltoall '" + name + "': " + rows + " rows do not split equally "
                        + "over " + size + " ranks; pass explicit splits");
            }
            java.util.Arrays.fill(s, rows / size);
        } else {
            if (splits.length != size) {
                throw new IllegalArgumentException("alltoall '" + name + "': splits has " + splits.length
                        + " entries but the job has " + size + " ranks");
            }
            long sum = 0;
            for (int i = 0; i < size; i++) {
                if (splits[i] < 0) {
                    throw new IllegalArgumentException("alltoall '" + name + "': splits[" + i + "] is negative");
                }
                s[i] = splits[i];
                sum += splits[i];
            }
            if (sum != rows) {
                throw new IllegalArgumentException("alltoall '" + name + "': splits sum to " + sum + " but the tensor "
                        + "has " + rows + " rows");
            }
        }
        return collectives.submit(new OpSpec(name, OpType.ALLTOALL, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0, s),
                t, null, blocking);
    }

    /**
     * Declares that this rank has no more data: until every rank has joined, it contributes zeros to
     * allreduces (AVERAGE still divides by the full size), and other collectives fail.
     *
     * @return the last rank to join, the same on every rank
     */
    public int join() {
        return waitFor(collectives.join(), "join", "join");
    }

    private static void requireName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("every collective needs a name that identifies it across ranks, "
                    + "e.g. the parameter's name");
        }
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > ControlCodec.MAX_STRING) {
            throw new IllegalArgumentException("tensor name of " + name.length() + " characters is too long (at most "
                    + ControlCodec.MAX_STRING + " bytes)");
        }
    }

    private static void requireOp(String name, Tensor t) {
        requireName(name);
        java.util.Objects.requireNonNull(t, "tensor");
        if (t.rank() > ControlCodec.MAX_DIMS) {
            throw new IllegalArgumentException("tensor '" + name + "' has " + t.rank() + " dims; at most "
                    + ControlCodec.MAX_DIMS + " are supported");
        }
    }

    private static void requireDims(String op, Tensor t) {
        if (t.rank() == 0) {
            throw new IllegalArgumentException(op + " needs a tensor with at least one dimension, not a scalar; "
                    + "reshape it to [1]");
        }
    }

    private <T> T waitFor(CompletableFuture<T> f, String op, String name) {
        return await(f, op + " '" + name + "'");
    }

    /**
     * Waits for the future of one of this worker's asynchronous collectives the way the blocking forms wait:
     * this thread drives the collective engine meanwhile (no hand-off to another thread), for at most
     * {@link KoloConfig#opTimeout()} ({@code KOLO_OP_TIMEOUT}), and the op's own exception is rethrown
     * unwrapped. For libraries built on the asynchronous forms, e.g. {@code DistributedOptimizer}.
     *
     * @param what names the op in the timeout's message, e.g. {@code "allreduce 'grad.w1'"}
     * @throws KoloException the op's failure, or, past the deadline, one naming {@code what} and
     *                       {@code KOLO_OP_TIMEOUT}
     * @throws KoloInterruptedException if the waiting thread is interrupted (see the class comment)
     */
    public <T> T await(CompletableFuture<T> future, String what) {
        java.util.Objects.requireNonNull(future, "future");
        try {
            return collectives.await(future, System.nanoTime() + config.opTimeout().toNanos());
        } catch (Deadlines.KoloTimeout e) {
            throw new KoloException(what + " did not complete within " + config.opTimeout().toSeconds()
                    + " s (KOLO_OP_TIMEOUT); the coordinator logs which ranks never submitted it");
        }
    }

    private WorkerView requireView() {
        WorkerView v = view.get();
        if (v.self() == null) {
            throw new IllegalStateException("this worker has no rank: it is closed or was never assigned one");
        }
        return v;
    }

    /** Leaves the job: other workers see this worker leave. Idempotent; bounded in time. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            collectives.close();
            if (health != null) {
                health.close();
            }
            cluster.close(Duration.ofSeconds(10));
            dataPlanes.close();
            dataPlane.close();
            observability.close();
        }
    }
}
