package dev.kolo.runtime;

import dev.kolo.runtime.internal.access.WorkerRegistry;
import dev.kolo.runtime.internal.bootstrap.Preflight;
import dev.kolo.runtime.internal.bootstrap.WiredWorker;
import dev.kolo.runtime.internal.bootstrap.WorkerBootstrap;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.cluster.WorkerView;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.engine.Deadlines;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 */
public final class Kolo implements AutoCloseable {
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
     *                       {@link KoloConfig#rendezvousTimeout()} (the message names who arrived)
     */
    public static Kolo init(KoloConfig config) {
        return new Kolo(WorkerBootstrap.start(config));
    }

    /** For tests: {@link Preflight#checkSecurity}, the check {@link #init(KoloConfig)} makes first. */
    static void checkSecurity(KoloConfig config) {
        Preflight.checkSecurity(config);
    }

    /** For tests: the size of this rank's mirror of the coordinator's response cache. */
    int cachedSpecs() {
        return collectives().cachedSpecs();
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

    /**
     * Waits until every rank of the current generation has called {@code barrier()}.
     *
     * @throws WorkerLostException if a worker of the generation is lost meanwhile
     * @throws KoloException       if the barrier does not complete within {@link KoloConfig#opTimeout()}
     */
    public void barrier() {
        synchronized (barrierLock) { // the n-th barrier of every rank meets the n-th of the others
            try {
                collectives().await(collectives().submit(BARRIER, EMPTY, EMPTY, true),
                        System.nanoTime() + config().opTimeout().toNanos());
            } catch (Deadlines.KoloTimeout e) {
                throw new KoloException("barrier did not complete within " + config().opTimeout().toSeconds()
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
        OpArguments.requireOp(name, t);
        OpArguments.requireReduction("allreduce", name, t, op);
        CollectiveClient collectives = collectives();
        OpSpec spec = OpArguments.allreduceSpec(collectives.lastSpec(name), name, t, op, prescale, postscale);
        return collectives.submit(spec, t, output, blocking);
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
        OpArguments.requireName(name);
        List<CompletableFuture<Tensor>> futures = new ArrayList<>(ts.size());
        if (ts.size() > OpSpec.MAX_GROUP) {
            throw new IllegalArgumentException("a group holds at most " + OpSpec.MAX_GROUP + " tensors; split it");
        }
        java.util.Objects.requireNonNull(op, "op");
        int group = ts.size() > 1 ? ts.size() : 0;
        for (int i = 0; i < ts.size(); i++) {
            Tensor t = ts.get(i);
            OpArguments.requireOp(name + "/" + i, t);
            OpArguments.requireReduction("allreduce", name + "/" + i, t, op);
            futures.add(collectives().submit(new OpSpec(name + "/" + i, OpType.ALLREDUCE, t.dtype(), t.shape(), op, 1.0,
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
        OpArguments.requireOp(name, t);
        OpArguments.requireDims("allgather", t);
        return collectives().submit(new OpSpec(name, OpType.ALLGATHER, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0,
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
        OpArguments.requireOp(name, t);
        int size = size();
        OpArguments.requireRoot(name, rootRank, size);
        return collectives().submit(new OpSpec(name, OpType.BROADCAST, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1,
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
        OpArguments.requireOp(name, t);
        OpArguments.requireDims("reducescatter", t);
        OpArguments.requireReduction("reducescatter", name, t, op);
        return collectives().submit(new OpSpec(name, OpType.REDUCESCATTER, t.dtype(), t.shape(), op, 1, 1, 0, null),
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
        OpArguments.requireOp(name, t);
        OpArguments.requireDims("alltoall", t);
        int size = size();
        long[] s = OpArguments.alltoallSplits(name, t, splits, size);
        return collectives().submit(new OpSpec(name, OpType.ALLTOALL, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0, s),
                t, null, blocking);
    }

    /**
     * Declares that this rank has no more data: until every rank has joined, it contributes zeros to
     * allreduces (AVERAGE still divides by the full size), and other collectives fail.
     *
     * @return the last rank to join, the same on every rank
     */
    public int join() {
        return waitFor(collectives().join(), "join", "join");
    }

    /** {@link #await}, naming the op only if it times out (a blocking collective allocates no message). */
    private <T> T waitFor(CompletableFuture<T> f, String op, String name) {
        try {
            return collectives().await(f, System.nanoTime() + config().opTimeout().toNanos());
        } catch (Deadlines.KoloTimeout e) {
            throw timedOut(op + " '" + name + "'");
        }
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
            return collectives().await(future, System.nanoTime() + config().opTimeout().toNanos());
        } catch (Deadlines.KoloTimeout e) {
            throw timedOut(what);
        }
    }

    private KoloException timedOut(String what) {
        return new KoloException(what + " did not complete within " + config().opTimeout().toSeconds()
                + " s (KOLO_OP_TIMEOUT); the coordinator logs which ranks never submitted it");
    }

    private CollectiveClient collectives() {
        return worker.collectives();
    }

    /** Leaves the job: other workers see this worker leave. Idempotent; bounded in time. */
    @Override
    public void close() {
        worker.close();
    }
}
