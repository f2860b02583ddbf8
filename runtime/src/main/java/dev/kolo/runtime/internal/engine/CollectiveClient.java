package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.dataplane.DataPlaneFactory;
import dev.kolo.runtime.internal.observability.Observability;
import dev.kolo.runtime.internal.collectives.Reducer;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A rank's side of the collectives, as the rest of the worker sees it. Training threads submit named ops here;
 * the {@link RankGeneration} of the current generation agrees on them with the other ranks and executes them,
 * in the same order on every rank. This class keeps the ops in flight by name (a name runs once at a time) and
 * ends generations; the {@link Engine} runs under one lock, driven by a caller waiting for its own op or by the
 * {@link CollectiveThread} ({@link EngineDriver} says who and how the others wait).
 */
public final class CollectiveClient implements AutoCloseable, RankGeneration.Completion {
    private final ControlChannel node;
    private final Observability observability;
    private final Map<String, PendingOp> inFlight = new ConcurrentHashMap<>();
    private final Engine engine;
    private final EngineDriver driver;
    private final CollectiveThread collective;

    public CollectiveClient(ControlChannel node, DataPlaneFactory dataPlanes, Reducer reducer, String threadName,
                     Observability observability) {
        this.node = node;
        this.observability = observability;
        this.engine = new Engine(dataPlanes, reducer, this);
        this.driver = new EngineDriver(engine, this);
        this.collective = new CollectiveThread(engine, driver, this, threadName);
        driver.collective(collective);
        collective.start();
    }

    /**
     * Submits one named op; the future completes with the result or the op's failure.
     *
     * @param output where an allreduce writes its result (may be the input itself), or null for a new tensor
     * @param waitForIt the caller will {@link #await} the op at once and so drive the engine itself: the
     *        collective thread is not woken for it
     */
    public CompletableFuture<Tensor> submit(OpSpec spec, Tensor input, Tensor output, boolean waitForIt) {
        RankGeneration g = engine.current;
        if (g == null) {
            return CompletableFuture.failedFuture(new KoloException("no generation: the worker is closed"));
        }
        if (g.abortCause != null) {
            return CompletableFuture.failedFuture(g.abortCause);
        }
        PendingOp op = new PendingOp(spec, input, output, g, new OpFuture(this));
        if (inFlight.putIfAbsent(spec.name, op) != null) {
            throw new IllegalArgumentException("tensor name '" + spec.name + "' is already in flight on this rank; "
                    + "wait for that op to complete or use another name");
        }
        if (g.abortCause != null) { // aborted while we registered: do not leave it behind
            inFlight.remove(spec.name, op);
            return CompletableFuture.failedFuture(g.abortCause);
        }
        engine.submit(op);
        if (!waitForIt) {
            driver.wake();
        }
        return op.future;
    }

    /** Tells the coordinator this rank has joined; completes with the last rank to join. */
    public CompletableFuture<Integer> join() {
        RankGeneration g = engine.current;
        if (g == null || g.abortCause != null) {
            return CompletableFuture.failedFuture(g == null ? new KoloException("no generation") : g.abortCause);
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        engine.post(() -> {
            if (g != engine.current || g.abortCause != null) {
                result.completeExceptionally(g.abortCause != null ? g.abortCause
                        : new KoloException("generation " + g.generation + " ended before join() ran"));
            } else {
                g.join(result);
            }
        });
        driver.wake();
        return result;
    }

    /**
     * Waits for {@code f} until the System.nanoTime() {@code deadline}, driving the engine meanwhile when no
     * other thread does; rethrows the op's own exception unwrapped.
     *
     * @throws Deadlines.KoloTimeout past the deadline
     */
    public <T> T await(CompletableFuture<T> f, long deadline) {
        drive(f, deadline);
        return Deadlines.await(f, deadline);
    }

    /**
     * Waits until {@code f} is done, driving the engine meanwhile when no other thread does.
     *
     * @throws Deadlines.KoloTimeout past the System.nanoTime() {@code deadline}
     */
    void drive(CompletableFuture<?> f, long deadline) {
        driver.drive(f, deadline);
    }

    /** A new generation was agreed: its data plane opens on the collective thread. */
    public void onAssignment(Assignment a, WorkerInfo self) {
        engine.current = new RankGeneration(a, self, node, observability, this);
        driver.wake();
    }

    /** Called from the event loop when the coordinator's instruction arrives. */
    public void onResponse(ControlMessage m) {
        long arrived = System.nanoTime();
        long generation = m instanceof OpResponse r ? r.generation() : ((JoinResponse) m).generation();
        engine.post(() -> {
            RankGeneration g = engine.current;
            if (g != null && g.generation == generation && g.abortCause == null) {
                g.onResponse(m, arrived);
            }
        });
        driver.wake();
    }

    /** Ends the current generation: wakes the data plane and fails every pending op with {@code cause}. */
    public void abort(KoloException cause) {
        abort(engine.current, cause);
    }

    /**
     * Membership saw a worker of the current generation leave: the generation ends with that cause. If the data
     * plane ended it first (a surviving peer closed its connections on its own abort, which names that peer),
     * later ops fail with this cause instead, which names the worker that was really lost.
     */
    public void workerLost(WorkerLostException cause) {
        RankGeneration g = engine.current;
        abort(g, cause);
        if (g != null) {
            g.abortCause = cause;
        }
    }

    /**
     * Ends generation {@code g}. A late failure of an older generation (its op was still running when the next
     * generation was assigned, e.g. a connection its peer closed on its own abort) ends only that generation,
     * whose ops already failed when it was aborted: it must not abort the new one, or this rank alone would
     * leave the new generation and the others would wait for it (found by bench chaos partition-3-2).
     */
    @Override
    public void abort(RankGeneration g, KoloException cause) {
        if (g == null) {
            return;
        }
        if (g.abortCause == null) {
            g.abortCause = cause;
            DataPlane dp = g.dataPlane;
            if (dp != null) {
                dp.abort(cause);
            }
        }
        for (PendingOp op : new ArrayList<>(inFlight.values())) {
            if (op.generation == g && inFlight.remove(op.spec.name, op)) {
                driver.complete(op, null, cause);
            }
        }
        engine.post(() -> g.aborted(cause));
        driver.wake();
    }

    /** Frees the name before completing, so the caller may reuse it as soon as it sees the result. */
    @Override
    public void finish(PendingOp op, Tensor result, Throwable error) {
        if (op == null || !inFlight.remove(op.spec.name, op)) {
            return;
        }
        driver.complete(op, result, error);
    }

    @Override
    public PendingOp pending(String name) {
        return inFlight.get(name);
    }

    public int inFlightCount() {
        return inFlight.size();
    }

    /** @return how many specs this rank's cache holds (for tests) */
    public int cachedSpecs() {
        engine.lock.lock();
        try {
            RankGeneration g = engine.current;
            return g == null ? 0 : g.cachedSpecs();
        } finally {
            engine.lock.unlock();
        }
    }

    @Override
    public void close() {
        abort(new KoloException("worker is closing"));
        collective.close();
        driver.wake();
        collective.interrupt();
        RankGeneration g = engine.current;
        if (g != null && g.dataPlane != null) {
            g.dataPlane.close();
        }
    }
}
