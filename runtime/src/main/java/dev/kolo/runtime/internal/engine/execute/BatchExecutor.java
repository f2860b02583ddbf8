package dev.kolo.runtime.internal.engine.execute;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.control.FusionPlan;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import dev.kolo.runtime.internal.flight.FlightRecorder;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.observability.Timeline;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs what the ranks agreed on and completes its ops: a small allreduce from the round's own bytes
 * ({@link EagerReduction}), batches on the data plane ({@link CollectiveOps}), fused by the same
 * {@link FusionPlan} rule the coordinator applies; records each op's phases in the metrics and the timeline. A
 * failure on the data plane fails the batch; a lost worker, a bug or a broken installation ends the generation
 * too, so that no rank is left waiting.
 */
public final class BatchExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(BatchExecutor.class);

    private final int size;
    private final BatchOutcomes outcomes;
    private final Observability observability;
    private final BatchKnobs knobs;
    private final CollectiveOps ops;
    private final EagerReduction eager;
    // Reused for every round's batches (under the engine lock), and emptied after each: nothing allocated for them.
    private final FusionPlan plan = new FusionPlan();
    private final List<OpSpec> agreedSpecs = new ArrayList<>();
    private final List<OpSpec> specs = new ArrayList<>();
    private final List<long[]> perRank = new ArrayList<>();
    private final List<Tensor> inputs = new ArrayList<>();
    private final List<Tensor> outputs = new ArrayList<>();
    private final List<PendingOp> batchOps = new ArrayList<>();
    private static final long[] NO_COUNTS = new long[0];
    /** The flight recorder's algorithm of a small allreduce reduced from the agreement round's own bytes. */
    private static final String EAGER = "agreement-round";

    /** @param size the ranks of the generation */
    public BatchExecutor(int size, BatchOutcomes outcomes, Observability observability, BatchKnobs knobs,
                  CollectiveOps ops, EagerReduction eager) {
        this.size = size;
        this.outcomes = outcomes;
        this.observability = observability;
        this.knobs = knobs;
        this.ops = ops;
        this.eager = eager;
    }

    /** Completes a small allreduce whose data every rank sent in the round: reduced, it is at {@code at} of {@code combined}. */
    public void reduceEager(PendingOp op, ByteBuffer combined, int at, long agreedAt) {
        boolean timed = observability.timed();
        // The round's end (timed: read then) stands for the op's start and end, since what is left (copying a few
        // bytes out) takes nanoseconds and a reading of the clock 25 of a 700 ns op; only the timeline, which draws
        // that part, reads the clock for it.
        boolean drawn = timed && observability.timeline().enabled();
        long started = drawn ? System.nanoTime() : agreedAt;
        Tensor result = op.output != null ? op.output : Tensor.allocate(op.spec.dtype, op.spec.shape);
        eager.finish(op.spec, combined, at, result.data());
        recordEager(op, agreedAt, started, timed, drawn);
        outcomes.finish(op, result, null);
    }

    /** Runs agreed cached ops on the data plane, fused where they fit. @return false if the generation ended */
    public boolean runFused(List<PendingOp> agreed, long agreedAt) {
        try {
            for (int i = 0; i < agreed.size(); i++) {
                agreedSpecs.add(agreed.get(i).spec);
            }
            int batches = plan.plan(agreedSpecs, knobs.fusionThreshold());
            for (int b = 0; b < batches; b++) {
                clearBatch();
                for (int k = plan.start(b); k < plan.end(b); k++) {
                    PendingOp op = agreed.get(plan.member(k));
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
        } finally {
            agreedSpecs.clear();
            clearBatch(); // no op (nor its tensors) is kept past its round
        }
    }

    private void clearBatch() {
        specs.clear();
        perRank.clear();
        inputs.clear();
        outputs.clear();
        batchOps.clear();
    }

    /** A job of one: every op runs at once, alone. */
    public void runLocally(PendingOp op) {
        long[] perRank = op.spec.type == OpType.ALLGATHER || op.spec.type == OpType.ALLTOALL
                ? new long[] {op.spec.rows()} : new long[0];
        List<Tensor> outputs = new ArrayList<>(1);
        outputs.add(op.output);
        List<PendingOp> batch = new ArrayList<>(1);
        batch.add(op);
        run(op.spec.type, batch, List.of(op.spec), List.of(perRank), List.of(op.input), outputs, op.submitNanos);
    }

    /**
     * Runs one batch on the data plane and completes its ops.
     *
     * @param batch the ops, null for an entry a joined rank contributes zeros to
     * @return false if the generation ended
     */
    public boolean run(OpType type, List<PendingOp> batch, List<OpSpec> specs, List<long[]> perRank,
                List<Tensor> inputs, List<Tensor> outputs, long agreedAt) {
        long started = System.nanoTime();
        FlightRecorder flight = observability.flight();
        if (flight.enabled()) {
            for (int i = 0; i < batch.size(); i++) {
                PendingOp op = batch.get(i);
                if (op != null) {
                    flight.started(op.flightId, agreedAt == 0 ? started : agreedAt, started);
                }
            }
        }
        List<Tensor> results;
        try {
            results = ops.run(type, specs, perRank, inputs, outputs);
        } catch (KoloException e) {
            if (e instanceof WorkerLostException) {
                outcomes.endGeneration(e);
            }
            batch.forEach(op -> outcomes.finish(op, null, e));
            return !(e instanceof WorkerLostException);
        } catch (RuntimeException | Error e) {
            // A bug or a broken installation must not leave ranks waiting: fail this op and the generation.
            LOG.error("{} failed on this rank", type.label(), e);
            KoloException wrapped = new KoloException(type.label() + " failed on this rank: " + e, e);
            batch.forEach(op -> outcomes.finish(op, null, wrapped));
            outcomes.endGeneration(wrapped);
            return false;
        }
        record(type, batch, agreedAt, started);
        for (int i = 0; i < batch.size(); i++) {
            outcomes.finish(batch.get(i), results.get(i), null);
        }
        return true;
    }

    /** Per-rank counts of a cached op: every rank's spec is the cached one, so an allgather's rows are equal. */
    private long[] perRankOfCached(OpSpec spec) {
        if (spec.type != OpType.ALLGATHER) {
            return NO_COUNTS; // read only
        }
        long[] rows = new long[size];
        Arrays.fill(rows, spec.rows());
        return rows;
    }

    // ---------------------------------------------------------------- observability

    private void record(OpType type, List<PendingOp> batch, long agreedAt, long started) {
        CollectiveOps.Phases p = ops.phases;
        long now = System.nanoTime();
        if (agreedAt == 0) {
            agreedAt = started; // the round did not read the clock (nothing recorded times when it ended)
        }
        KoloMetrics metrics = observability.metrics;
        metrics.traffic(type, p.transport, p.sentBytes, p.receivedBytes);
        if (type == OpType.ALLREDUCE) {
            metrics.fused(batch.size());
        }
        Timeline timeline = observability.timeline();
        FlightRecorder flight = observability.flight();
        for (int i = 0; i < batch.size(); i++) {
            PendingOp op = batch.get(i);
            if (op == null) {
                continue; // a joined rank's zeros
            }
            metrics.negotiated(agreedAt - op.submitNanos);
            metrics.collective(type, op.spec.dtype, now - op.submitNanos, op.spec.byteSize());
            observability.processSetOp(type, now - op.submitNanos, op.spec.byteSize());
            knobs.completed(op.spec.byteSize());
            if (flight.enabled()) {
                flight.ran(op.flightId, ops.lastAlgorithm(), p.transport);
            }
            if (timeline.enabled()) {
                String name = op.spec.name;
                timeline.span(name, "NEGOTIATE_" + type.name(), op.submitNanos, agreedAt);
                timeline.span(name, "QUEUE", agreedAt, started);
                if (p.copyInStart >= 0) {
                    timeline.span(name, "MEMCPY_IN_FUSION_BUFFER", p.copyInStart, p.copyInEnd);
                }
                if (p.splitNanos >= 0) {
                    timeline.span(name, "REDUCE_SCATTER", p.opStart, p.splitNanos, p.transport);
                    long allgatherStart = p.splitNanos;
                    if (p.crossHostEndNanos >= 0) {
                        timeline.span(name, "ALLREDUCE_ACROSS_HOSTS", p.splitNanos, p.crossHostEndNanos, p.transport);
                        allgatherStart = p.crossHostEndNanos;
                    }
                    timeline.span(name, "ALLGATHER", allgatherStart, p.opEnd, p.transport);
                } else {
                    timeline.span(name, phaseName(type), p.opStart, p.opEnd, p.transport);
                }
                if (p.copyOutStart >= 0) {
                    timeline.span(name, "MEMCPY_OUT_FUSION_BUFFER", p.copyOutStart, p.copyOutEnd);
                }
            }
        }
    }

    private void recordEager(PendingOp op, long agreedAt, long started, boolean timed, boolean drawn) {
        KoloMetrics metrics = observability.metrics;
        metrics.eager();
        knobs.completed(op.spec.byteSize());
        if (!timed) {
            return;
        }
        long now = drawn ? System.nanoTime() : agreedAt;
        op.doneNanos = now;
        FlightRecorder flight = observability.flight();
        if (flight.enabled()) {
            flight.started(op.flightId, agreedAt, started);
            flight.ran(op.flightId, EAGER, ops.transport());
        }
        metrics.negotiated(agreedAt - op.submitNanos);
        metrics.collective(OpType.ALLREDUCE, op.spec.dtype, now - op.submitNanos, op.spec.byteSize());
        observability.processSetOp(OpType.ALLREDUCE, now - op.submitNanos, op.spec.byteSize());
        if (drawn) {
            Timeline timeline = observability.timeline();
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
}
