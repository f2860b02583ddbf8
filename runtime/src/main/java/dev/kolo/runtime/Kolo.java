package dev.kolo.runtime;

import dev.kolo.runtime.internal.access.WorkerRegistry;
import dev.kolo.runtime.internal.bootstrap.Preflight;
import dev.kolo.runtime.internal.bootstrap.WiredWorker;
import dev.kolo.runtime.internal.bootstrap.WorkerBootstrap;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.cluster.WorkerView;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import java.util.concurrent.atomic.AtomicBoolean;
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
 *
 * <p><b>A caller's tensors after it stops waiting.</b> Whenever a wait ends without the op's result (interrupted,
 * past {@code KOLO_OP_TIMEOUT} or a {@code get(timeout)}, the op failed, or {@link #abandon}), it returns only
 * once this rank's data plane no longer reads or writes the op's tensors: an agreement round or data-plane op
 * using them ends first, and an op that still has to run then runs on a copy of its input made at that moment.
 * Nothing of the call's tensors is read or written afterwards, so memory the program frees or reuses (an
 * in-place allreduce's tensor, an engine's gradient) is never touched: no late write into it. The wait for
 * this is bounded: a step ends within {@code KOLO_OP_TIMEOUT}, and past it the generation is ended (which stops
 * the data plane). The copy is made only then, never for an op whose caller gets its result.
 */
public final class Kolo extends Collectives implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Kolo.class);
    /** The notice that a program started on its own is a job of one is given once per process. */
    private static final AtomicBoolean JOB_OF_ONE_SAID = new AtomicBoolean();

    /** The running worker behind this handle: cluster member, engine, data plane, metrics (internal). */
    private final WiredWorker worker;
    private final AtomicBoolean leaving = new AtomicBoolean();

    private Kolo(WiredWorker worker) {
        this.worker = worker;
        // Kolo's checkpoint and elastic modules find the worker's cluster member through the internal registry,
        // not through a public method.
        WorkerRegistry.register(this, worker);
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
     *                       {@link Settings#RENDEZVOUS_TIMEOUT} (the message names who arrived)
     */
    public static Kolo init(KoloConfig config) {
        return new Kolo(WorkerBootstrap.start(config));
    }

    /** For tests: {@link Preflight#checkSecurity}, the check {@link #init(KoloConfig)} makes first. */
    static void checkSecurity(KoloConfig config) {
        Preflight.checkSecurity(config);
    }

    /** For tests: the tuned values this rank took ({@code KOLO_AUTOTUNE}), each with the round it took them at. */
    java.util.List<String> autotuneHistory() {
        return client().tuningHistory();
    }

    /** For tests: whether this worker's autotuner (rank 0's) has finished its search. */
    boolean autotuneDone() {
        return client().tuningDone();
    }

    /** For tests: the size of this rank's mirror of the coordinator's response cache. */
    int cachedSpecs() {
        return client().cachedSpecs();
    }

    /** For tests: the sizes of this rank's structures kept per tensor name (none may grow with every name). */
    java.util.Map<String, Integer> perNameSizes() {
        return client().perNameSizes();
    }

    /** @return this worker's rank in the current generation, 0..size-1 */
    public int rank() {
        return worker.view().self().rank();
    }

    /** @return the number of workers in the current generation */
    public int size() {
        return worker.view().size();
    }

    /** @return this worker's index among the workers on its host */
    public int localRank() {
        return worker.view().self().localRank();
    }

    /** @return the number of workers on this worker's host */
    public int localSize() {
        return worker.view().self().localSize();
    }

    /** @return the rendezvous generation: it grows each time the job's membership is agreed anew */
    public long generation() {
        return worker.view().generation();
    }

    /**
     * @return the rank, in the current generation, of the worker holding the coordinator role, or -1 if the
     *         coordinator is not part of it (it left and a new one took over)
     */
    public int coordinatorRank() {
        WorkerView v = worker.view();
        return v.rankOf(v.coordinatorNode());
    }

    /** @return the generation the current coordinator presides over (grows when a new one takes over) */
    public long coordinatorGeneration() {
        return worker.view().coordinatorGeneration();
    }

    /** @return the cluster node id of the current coordinator */
    String coordinatorNode() {
        return worker.view().coordinatorNode();
    }

    /** @return this worker's cluster membership */
    ClusterNode clusterNode() {
        return worker.clusterNode();
    }

    /** @return this worker's cluster node id */
    String nodeId() {
        return worker.clusterNode().nodeId();
    }

    /**
     * @return this worker's meter registry (Prometheus), where applications and the other Kolo modules add
     *         their own meters (training loss, checkpoint times) to be served on {@code /metrics}
     */
    public io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return worker.meterRegistry();
    }

    /** @return the port of the metrics and health endpoint, or 0 when it is disabled */
    public int metricsPort() {
        return worker.metricsPort();
    }

    /**
     * @return the address of this worker's live status page ({@code http://host:port/}, served on the metrics
     *         port beside {@code /metrics}), or null when the metrics port is off ({@code KOLO_METRICS_PORT=0})
     */
    public String statusUrl() {
        return worker.statusUrl();
    }

    /**
     * @return the address of the coordinator's status page, the one that shows the whole job (every rank, the
     *         generation history, the stalls), or null when the coordinator serves none
     */
    public String jobStatusUrl() {
        return worker.coordinatorStatusUrl();
    }

    /**
     * Tells Kolo that this rank finished training step {@code step}, which processed {@code samples} samples
     * (images, sequences) on this rank. The status page turns these into the step rate, the samples per second
     * and each rank's step time and busy time (its step time minus the time it waited for collectives: the rank
     * the others wait for has the highest); the metrics {@code kolo_program_step} and
     * {@code kolo_program_samples_total} carry them too. Call it once per step, from the training loop; it
     * allocates nothing.
     *
     * @throws IllegalArgumentException if {@code step} or {@code samples} is negative
     */
    public void reportStep(long step, long samples) {
        worker.progress().step(step, samples);
    }

    /**
     * Reports this rank's newest value of one of the program's own scalars, such as {@code "loss"} or
     * {@code "accuracy"}: the status page plots it (the mean over the ranks that report it) and the metric
     * {@code kolo_program_scalar{name="loss"}} serves it. After a name's first report, a call allocates nothing.
     *
     * @param name 1 to 64 letters, digits, '_', '.' or '-'; at most 32 names per rank
     * @throws IllegalArgumentException naming the rule, for a name that breaks it
     */
    public void reportScalar(String name, double value) {
        worker.progress().scalar(name, value);
    }

    /** @return which reduction kernels run: "native" (SIMD) or "java" (the fallback) */
    public String kernels() {
        return worker.kernelsName();
    }

    /** @return the configuration this worker runs with */
    public KoloConfig config() {
        return worker.config();
    }

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
        worker.rejoin();
        leaving.set(false);
        LOG.info("rejoined: rank {} of {}, generation {}", rank(), size(), generation());
    }

    /**
     * @return true when workers wait to join this job, or this worker asked to leave: the ranks should
     *         agree on it at their next commit (it reaches ranks at different moments) and then
     *         {@link #rejoin()} together
     */
    public boolean membershipChangePending() {
        return worker.changePending() || leaving.get();
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


    // ---------------------------------------------------------------- process sets

    /**
     * Creates a process set: collectives among {@code ranks} alone (Horovod's {@code add_process_set}). Every rank
     * of the job calls it with the same ranks in the same order, and creates its sets in the same order (they are
     * numbered 1, 2, ... in each generation); the call exchanges the ranks' lists (an allgather of the job), so
     * a rank that passes other ranks, or skips a set, makes it fail on every rank with a message naming what each
     * rank passed. Sets may overlap. The set's rank {@code i} is the job's rank {@code ranks[i]}.
     *
     * <pre>{@code
     * ProcessSet evens = kolo.processSet(0, 2);
     * if (evens.rank() >= 0) {             // a member
     *     evens.allreduce("eval/loss", loss, ReduceOp.AVERAGE);
     * }
     * }</pre>
     *
     * @param ranks distinct ranks of the current generation, at least one
     * @return the set, on members and non-members alike ({@link ProcessSet#rank()} is -1 on a non-member)
     * @throws IllegalArgumentException on every rank, if the ranks are empty, repeated or not ranks of the job
     * @throws CollectiveMismatchException on every rank, if the ranks passed other lists
     * @throws KoloException if the generation ends meanwhile, or the exchange does not complete in time
     */
    public ProcessSet processSet(int... ranks) {
        java.util.Objects.requireNonNull(ranks, "ranks");
        ProcessSets.Agreed set = sets.agree(this, generation(), ranks);
        return new ProcessSet(this::generation, rank(), opTimeout(), this::endProcessSet, set.id(), set.ranks(),
                set.generation(), ProcessSets.open(client(), rank(), set));
    }

    private final ProcessSets sets = new ProcessSets();

    /** The set is closed on this rank: its engine stops. */
    void endProcessSet(ProcessSet set) {
        if (set.rank() >= 0 && set.generation() == generation()) { // a later generation's set may have its id
            client().endSet(set.id(), new KoloException(set + " is closed"));
        }
    }


    @Override
    CollectiveClient client() {
        return worker.collectives();
    }

    @Override
    java.time.Duration opTimeout() {
        return config().get(Settings.OP_TIMEOUT);
    }

    /**
     * Leaves the job. The other workers are told first, so their generation ends as this worker's close: what
     * they still wait for fails with a {@link WorkerLostException} that says this rank closed, and they log it
     * without a warning (an elastic job regroups as for a lost worker). Idempotent; bounded in time (the notice
     * waits at most 3 s for the others).
     */
    @Override
    public void close() {
        worker.close();
    }
}
