package dev.kolo.runtime;

import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.engine.op.Deadlines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The collectives of a group of ranks: the whole job ({@link Kolo}) or a {@link ProcessSet} of it. Every rank of
 * the group submits the same named ops; each name is agreed among the group's ranks alone, and ranks, sizes and
 * roots are the group's ({@link #rank()}, {@link #size()}). How a future completes and how an interrupted wait
 * ends is the same for every group (see {@link Kolo}).
 */
public abstract sealed class Collectives permits Kolo, ProcessSet {
    Collectives() {
    }

    /** @return the engine that runs this group's ops on this rank; fails naming why when there is none */
    abstract CollectiveClient client();

    /** @return how long a blocking call waits ({@code KOLO_OP_TIMEOUT}) */
    abstract Duration opTimeout();

    /** @return this rank in the group, 0..size-1 */
    public abstract int rank();

    /** @return the number of ranks in the group */
    public abstract int size();

    /**
     * Waits until every rank of the group (the generation, or the process set) has called {@code barrier()}.
     *
     * @throws WorkerLostException if a worker of the generation is lost meanwhile
     * @throws KoloException       if the barrier does not complete within {@link Settings#OP_TIMEOUT}
     */
    public void barrier() {
        synchronized (barrierLock) { // the n-th barrier of every rank meets the n-th of the others
            try {
                client().awaitSubmitted(client().submit(BARRIER, EMPTY, EMPTY, true), opTimeout().toNanos());
            } catch (Deadlines.KoloTimeout e) {
                throw new KoloException("barrier did not complete within " + opTimeout().toSeconds()
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
        CollectiveClient collectives = client();
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
            futures.add(client().submit(new OpSpec(name + "/" + i, OpType.ALLREDUCE, t.dtype(), t.shape(), op, 1.0,
                    1.0, 0, null, group), t, null, i == ts.size() - 1));
        }
        List<Tensor> results = new ArrayList<>(ts.size());
        int i = 0;
        try {
            for (; i < futures.size(); i++) { // submitted before the waits began: each waits from now, as await() does
                results.add(client().await(futures.get(i), System.nanoTime() + opTimeout().toNanos()));
            }
        } catch (Deadlines.KoloTimeout e) {
            abandonAfter(futures, i);
            throw timedOut("grouped allreduce '" + name + "/" + i + "'");
        } catch (RuntimeException e) {
            abandonAfter(futures, i);
            throw e;
        }
        return results;
    }

    /** The group's members after the one whose wait failed: the caller's tensors are let go of before it throws. */
    private static void abandonAfter(List<CompletableFuture<Tensor>> futures, int failed) {
        for (int k = failed + 1; k < futures.size(); k++) {
            CollectiveClient.abandon(futures.get(k));
        }
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
        return client().submit(new OpSpec(name, OpType.ALLGATHER, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0,
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
        return client().submit(new OpSpec(name, OpType.BROADCAST, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1,
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
        return client().submit(new OpSpec(name, OpType.REDUCESCATTER, t.dtype(), t.shape(), op, 1, 1, 0, null),
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
        return client().submit(new OpSpec(name, OpType.ALLTOALL, t.dtype(), t.shape(), ReduceOp.SUM, 1, 1, 0, s),
                t, null, blocking);
    }

    /**
     * Declares that this rank has no more data: until every rank has joined, it contributes zeros to
     * allreduces (AVERAGE still divides by the full size), and other collectives fail.
     *
     * @return the last rank to join, the same on every rank
     */
    public int join() {
        return waitFor(client().join(), "join", "join");
    }

    /**
     * Waits for the op a blocking form has just submitted, naming it only if it times out (a blocking collective
     * allocates no message); its timeout counts from the submit.
     */
    private <T> T waitFor(CompletableFuture<T> f, String op, String name) {
        try {
            return client().awaitSubmitted(f, opTimeout().toNanos());
        } catch (Deadlines.KoloTimeout e) {
            throw timedOut(op + " '" + name + "'");
        }
    }

    /**
     * Waits for the future of one of this worker's asynchronous collectives the way the blocking forms wait:
     * this thread drives the collective engine meanwhile (no hand-off to another thread), for at most
     * {@link Settings#OP_TIMEOUT} ({@code KOLO_OP_TIMEOUT}), and the op's own exception is rethrown
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
            return client().await(future, System.nanoTime() + opTimeout().toNanos());
        } catch (Deadlines.KoloTimeout e) {
            throw timedOut(what);
        }
    }

    /**
     * Stops waiting for one of this worker's asynchronous collectives without its result, e.g. the rest of a
     * step after another of its ops failed: returns once this rank's data plane no longer reads or writes the
     * op's tensors (see {@link Kolo}, "A caller's tensors after it stops waiting"), so that their memory may be
     * freed or reused. The op is not withdrawn, since the other ranks may be running it: it runs once every rank
     * has submitted it, on a copy of its input made now, and its result on this rank is discarded; its name
     * stays in flight until then, and {@link #await} on the same future still waits for that. A future that is
     * done with its result, or not one of Kolo's, is left as it is. Keeps the thread's interrupt status.
     *
     * @throws KoloException if the data plane did not let go even after its generation was ended (do not free
     *                       the memory then)
     */
    public void abandon(CompletableFuture<?> future) {
        java.util.Objects.requireNonNull(future, "future");
        CollectiveClient.abandon(future);
    }

    private KoloException timedOut(String what) {
        return new KoloException(what + " did not complete within " + opTimeout().toSeconds()
                + " s (KOLO_OP_TIMEOUT); the coordinator logs which ranks never submitted it");
    }


}
