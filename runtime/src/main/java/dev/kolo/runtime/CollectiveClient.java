package dev.kolo.runtime;

import dev.kolo.runtime.ControlMessage.Assignment;
import dev.kolo.runtime.ControlMessage.CachedOpRequest;
import dev.kolo.runtime.ControlMessage.JoinRequest;
import dev.kolo.runtime.ControlMessage.JoinResponse;
import dev.kolo.runtime.ControlMessage.OpRequest;
import dev.kolo.runtime.ControlMessage.OpResponse;
import dev.kolo.runtime.ControlMessage.ResponseEntry;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rank's side of the collectives. Training threads submit named ops here; requests go to the
 * coordinator; its responses are executed strictly in sequence order on one collective thread, which owns
 * the data plane of the current generation. When the generation is aborted every pending op fails at once.
 */
final class CollectiveClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CollectiveClient.class);

    private final ClusterNode node;
    private final DataPlaneFactory dataPlanes;
    private final DeliveryOptions control = new DeliveryOptions().setCodecName(ControlCodec.NAME);
    private final Map<String, PendingOp> inFlight = new ConcurrentHashMap<>();
    private final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile Generation current;
    private volatile boolean closed;

    // Confined to the collective thread.
    private final TreeMap<Long, ControlMessage> early = new TreeMap<>();
    private final Map<Long, Long> arrivals = new HashMap<>();
    private long nextSequence;
    private boolean joined;
    private CompletableFuture<Integer> joinResult;

    private final Observability observability;

    CollectiveClient(ClusterNode node, DataPlaneFactory dataPlanes, String threadName, Observability observability) {
        this.node = node;
        this.observability = observability;
        this.dataPlanes = dataPlanes;
        this.thread = new Thread(this::loop, threadName);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Submits one named op; the future completes with the result or the op's failure. */
    CompletableFuture<Tensor> submit(OpSpec spec, Tensor input) {
        return submit(spec, input, null);
    }

    /** As {@link #submit(OpSpec, Tensor)}, writing the result into {@code output} (may be the input itself). */
    CompletableFuture<Tensor> submit(OpSpec spec, Tensor input, Tensor output) {
        Generation g = current;
        if (g == null) {
            return CompletableFuture.failedFuture(new KoloException("no generation: the worker is closed"));
        }
        if (g.abortCause != null) {
            return CompletableFuture.failedFuture(g.abortCause);
        }
        PendingOp op = new PendingOp(spec, input, output, new CompletableFuture<>());
        if (inFlight.putIfAbsent(spec.name, op) != null) {
            throw new IllegalArgumentException("tensor name '" + spec.name + "' is already in flight on this rank; "
                    + "wait for that op to complete or use another name");
        }
        if (g.abortCause != null) { // aborted while we registered: do not leave it behind
            inFlight.remove(spec.name, op);
            return CompletableFuture.failedFuture(g.abortCause);
        }
        if (g.size == 1) {
            tasks.add(() -> runLocally(g, op));
        } else {
            Integer id = spec.cacheable() ? g.cacheIds.get(spec) : null;
            observability.metrics.cacheHit(id != null);
            ControlMessage request = id != null ? new CachedOpRequest(g.generation, g.rank, id)
                    : new OpRequest(g.generation, g.rank, spec);
            node.vertx().eventBus().send(g.coordinatorAddress, node.seal(g.coordinatorNode, request), control);
        }
        return op.future;
    }

    /** Tells the coordinator this rank has joined; completes with the last rank to join. */
    CompletableFuture<Integer> join() {
        Generation g = current;
        if (g == null || g.abortCause != null) {
            return CompletableFuture.failedFuture(g == null ? new KoloException("no generation") : g.abortCause);
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        tasks.add(() -> {
            if (joinResult != null && !joinResult.isDone()) {
                result.completeExceptionally(new IllegalStateException("join() is already in progress on this rank"));
                return;
            }
            joined = true;
            joinResult = result;
            if (g.size == 1) {
                joined = false;
                result.complete(g.rank);
            } else {
                node.vertx().eventBus().send(g.coordinatorAddress,
                        node.seal(g.coordinatorNode, new JoinRequest(g.generation, g.rank)), control);
            }
        });
        return result;
    }

    /** A new generation was agreed: drop the old data plane and open this one's (on the collective thread). */
    void onAssignment(Assignment a, WorkerInfo self) {
        Generation g = new Generation(a, self, a.coordinatorNode(), node.addresses().coordinator(a.coordinatorNode()));
        Generation previous = current;
        current = g; // with its own, empty, response-cache mirror
        tasks.add(() -> {
            if (previous != null && previous.dataPlane != null) {
                previous.dataPlane.close();
            }
            nextSequence = 0;
            early.clear();
            try {
                g.open(dataPlanes);
            } catch (KoloException e) {
                abort(g, e);
            }
        });
    }

    /** Ends the generation: wakes the data plane and fails every pending op with {@code cause}. */
    void abort(KoloException cause) {
        abort(current, cause);
    }

    /**
     * Ends generation {@code g}. A late failure of an older generation (its op was still running on this thread
     * when the next generation was assigned, e.g. a connection its peer closed on its own abort) ends only that
     * generation, whose ops already failed when it was aborted: it must not abort the new one, or this rank
     * alone would leave the new generation and the others would wait for it (found by bench chaos partition-3-2).
     */
    private void abort(Generation g, KoloException cause) {
        if (g != null && g.abortCause == null) {
            g.abortCause = cause;
            DataPlane dp = g.dataPlane;
            if (dp != null) {
                dp.abort(cause);
            }
        }
        if (g != current) {
            return;
        }
        for (PendingOp op : new ArrayList<>(inFlight.values())) {
            if (inFlight.remove(op.spec.name, op)) {
                op.future.completeExceptionally(cause);
            }
        }
        tasks.add(() -> {
            if (joinResult != null) {
                joinResult.completeExceptionally(cause);
                joined = false;
            }
        });
    }

    /** Called from the event loop when the coordinator's instruction arrives. */
    void onResponse(ControlMessage m) {
        long arrived = System.nanoTime();
        tasks.add(() -> accept(m, arrived));
    }

    private void accept(ControlMessage m, long arrivedNanos) {
        Generation g = current;
        long generation = m instanceof OpResponse r ? r.generation() : ((JoinResponse) m).generation();
        long sequence = m instanceof OpResponse r ? r.sequence() : ((JoinResponse) m).sequence();
        if (g == null || generation != g.generation || sequence < nextSequence) {
            return; // stale
        }
        early.put(sequence, m);
        arrivals.put(sequence, arrivedNanos);
        while (!early.isEmpty() && early.firstKey() == nextSequence) {
            ControlMessage next = early.pollFirstEntry().getValue();
            long arrived = arrivals.remove(nextSequence);
            nextSequence++;
            if (next instanceof OpResponse r) {
                execute(g, r, arrived);
            } else {
                JoinResponse j = (JoinResponse) next;
                joined = false;
                if (joinResult != null) {
                    joinResult.complete(j.lastRank());
                }
            }
        }
    }

    private void execute(Generation g, OpResponse r, long arrivedNanos) {
        long started = System.nanoTime();
        String malformed = ControlChecks.response(r, g.size);
        if (malformed != null) {
            protocolError(malformed);
            return;
        }
        // Mirror the coordinator's cache: new ids first, then evictions. A response that brings more new specs
        // than the cache holds evicts some of its own, so evicting first would keep those forever (a leak of
        // one spec per such entry and step, found by bench soak).
        for (ResponseEntry e : r.entries()) {
            if (e.spec() != null && e.cacheId() >= 0) {
                g.cacheSpecs.put(e.cacheId(), e.spec());
                g.cacheIds.put(e.spec(), e.cacheId());
            }
        }
        for (int id : r.evicted()) {
            OpSpec old = g.cacheSpecs.remove(id);
            if (old != null) {
                g.cacheIds.remove(old, id);
            }
        }
        List<OpSpec> specs = new ArrayList<>(r.entries().size());
        List<long[]> perRank = new ArrayList<>(r.entries().size());
        List<Tensor> inputs = new ArrayList<>(r.entries().size());
        List<Tensor> outputs = new ArrayList<>(r.entries().size());
        List<PendingOp> ops = new ArrayList<>(r.entries().size());
        for (ResponseEntry e : r.entries()) {
            PendingOp op = inFlight.get(e.name());
            ops.add(op);
            if (r.failed()) {
                continue;
            }
            OpSpec spec = op != null ? op.spec : e.spec() != null ? e.spec() : g.cacheSpecs.get(e.cacheId());
            if (op == null && !(joined && r.type() == OpType.ALLREDUCE && spec != null)) {
                protocolError("the coordinator scheduled " + r.type().label() + " '" + e.name()
                        + "' which this rank never submitted");
                return;
            }
            String wrong = ControlChecks.entry(r.type(), spec, e.perRank(), g.rank, g.size);
            if (wrong != null) {
                protocolError(wrong);
                return;
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
            for (PendingOp op : ops) {
                if (op != null) {
                    finish(op, null, error);
                }
            }
            return;
        }
        List<Tensor> results;
        try {
            results = g.ops.run(r.type(), specs, perRank, inputs, outputs);
        } catch (KoloException e) {
            if (e instanceof WorkerLostException) {
                abort(g, e);
            }
            ops.forEach(op -> finish(op, null, e));
            return;
        } catch (RuntimeException | Error e) {
            // A bug or a broken installation must not leave ranks waiting: fail this op and the generation.
            LOG.error("{} failed on this rank", r.type().label(), e);
            KoloException wrapped = new KoloException(r.type().label() + " failed on this rank: " + e, e);
            ops.forEach(op -> finish(op, null, wrapped));
            abort(g, wrapped);
            return;
        }
        record(g, r.type(), ops, specs, arrivedNanos, started);
        for (int i = 0; i < ops.size(); i++) {
            finish(ops.get(i), results.get(i), null);
        }
    }

    /** A response this rank cannot run as sent: the ranks no longer agree, so the generation ends. */
    private void protocolError(String problem) {
        LOG.warn("control plane: rank {} refuses a response from the coordinator: {}", current == null ? -1
                : current.rank, problem);
        abort(new KoloException("protocol error: " + problem));
    }

    /** Metrics and timeline of one executed response; nothing is allocated when the timeline is off. */
    private void record(Generation g, OpType type, List<PendingOp> ops, List<OpSpec> specs, long arrivedNanos,
                        long startedNanos) {
        CollectiveOps.Phases p = g.ops.phases;
        long now = System.nanoTime();
        KoloMetrics metrics = observability.metrics;
        metrics.traffic(type, p.sentBytes, p.receivedBytes);
        if (type == OpType.ALLREDUCE) {
            metrics.fused(specs.size());
        }
        Timeline timeline = observability.timeline();
        for (int i = 0; i < ops.size(); i++) {
            PendingOp op = ops.get(i);
            if (op == null) {
                continue; // a joined rank's zeros
            }
            metrics.negotiated(arrivedNanos - op.submitNanos);
            metrics.collective(type, op.spec.dtype, now - op.submitNanos, op.spec.byteSize());
            if (timeline.enabled()) {
                String name = op.spec.name;
                timeline.span(name, "NEGOTIATE_" + type.name(), op.submitNanos, arrivedNanos);
                timeline.span(name, "QUEUE", arrivedNanos, startedNanos);
                if (p.copyInStart >= 0) {
                    timeline.span(name, "MEMCPY_IN_FUSION_BUFFER", p.copyInStart, p.copyInEnd);
                }
                if (p.splitNanos >= 0) {
                    timeline.span(name, "REDUCE_SCATTER", p.opStart, p.splitNanos);
                    timeline.span(name, "ALLGATHER", p.splitNanos, p.opEnd);
                } else {
                    timeline.span(name, phaseName(type, g.size), p.opStart, p.opEnd);
                }
                if (p.copyOutStart >= 0) {
                    timeline.span(name, "MEMCPY_OUT_FUSION_BUFFER", p.copyOutStart, p.copyOutEnd);
                }
            }
        }
    }

    /** The data-plane phase of an op that has no reduce-scatter/allgather split. */
    private static String phaseName(OpType type, int size) {
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

    /** Frees the name before completing, so the caller may reuse it as soon as it sees the result. */
    private void finish(PendingOp op, Tensor result, Throwable error) {
        if (op == null || !inFlight.remove(op.spec.name, op)) {
            return;
        }
        if (error != null) {
            op.future.completeExceptionally(error);
        } else {
            op.future.complete(result);
        }
    }

    private void runLocally(Generation g, PendingOp op) {
        if (!inFlight.containsKey(op.spec.name)) {
            return; // aborted meanwhile
        }
        try {
            long[] perRank = op.spec.type == OpType.ALLGATHER ? new long[] {op.spec.rows()}
                    : op.spec.type == OpType.ALLTOALL ? new long[] {op.spec.rows()} : new long[0];
            List<Tensor> outputs = new ArrayList<>(1);
            outputs.add(op.output);
            long started = System.nanoTime();
            Tensor result = g.ops.run(op.spec.type, List.of(op.spec), List.of(perRank), List.of(op.input), outputs)
                    .get(0);
            record(g, op.spec.type, List.of(op), List.of(op.spec), started, started);
            finish(op, result, null);
        } catch (RuntimeException | Error e) {
            finish(op, null, e instanceof KoloException ? e : new KoloException(op.spec.type.label() + " failed: " + e, e));
        }
    }

    private void loop() {
        while (!closed) {
            try {
                tasks.take().run();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                LOG.error("collective thread: unexpected failure; aborting the generation", e);
                abort(new KoloException("internal error on the collective thread: " + e, e));
            }
        }
    }

    int inFlightCount() {
        return inFlight.size();
    }

    /** @return how many specs this rank's mirror of the response cache holds, read on the collective thread */
    int cachedSpecs() {
        CompletableFuture<Integer> size = new CompletableFuture<>();
        tasks.add(() -> {
            Generation g = current;
            size.complete(g == null ? 0 : Math.max(g.cacheSpecs.size(), g.cacheIds.size()));
        });
        try {
            return size.get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new KoloException("the collective thread did not answer: " + e, e);
        }
    }

    @Override
    public void close() {
        abort(new KoloException("worker is closing"));
        closed = true;
        thread.interrupt();
        Generation g = current;
        if (g != null && g.dataPlane != null) {
            g.dataPlane.close();
        }
    }

    /** One agreed generation as this rank runs it. */
    static final class Generation {
        final long generation;
        final int rank;
        final int size;
        final String coordinatorNode;
        final String coordinatorAddress;
        final Assignment assignment;
        final WorkerInfo self;
        volatile KoloException abortCause;
        volatile DataPlane dataPlane;
        CollectiveOps ops;
        /**
         * This generation's mirror of the coordinator's response cache. Per generation, so that a response of
         * the previous generation still being executed cannot leave an id that a submit of this one would
         * send (the new coordinator never issued it).
         */
        final Map<OpSpec, Integer> cacheIds = new ConcurrentHashMap<>();
        /** Confined to the collective thread. */
        final Map<Integer, OpSpec> cacheSpecs = new HashMap<>();

        Generation(Assignment a, WorkerInfo self, String coordinatorNode, String coordinatorAddress) {
            this.coordinatorNode = coordinatorNode;
            this.assignment = a;
            this.self = self;
            this.generation = a.generation();
            this.rank = self.rank();
            this.size = a.workers().size();
            this.coordinatorAddress = coordinatorAddress;
        }

        void open(DataPlaneFactory factory) {
            dataPlane = factory.open(assignment, self);
            if (abortCause != null) {
                dataPlane.abort(abortCause);
            }
            ops = new CollectiveOps(rank, size, dataPlane);
        }
    }

    /** An op this rank has submitted and not yet seen complete. */
    private static final class PendingOp {
        final OpSpec spec;
        final Tensor input;
        final Tensor output;
        final CompletableFuture<Tensor> future;
        final long submitNanos = System.nanoTime();

        PendingOp(OpSpec spec, Tensor input, Tensor output, CompletableFuture<Tensor> future) {
            this.spec = spec;
            this.input = input;
            this.output = output;
            this.future = future;
        }
    }
}
