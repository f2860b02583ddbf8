package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.Tensor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of a submitted op. A thread that waits on it ({@link #join}, {@link #get}) drives the rank's
 * collective engine meanwhile (see {@link EngineDriver}), as a blocking call does: no thread has to be
 * woken to hand it the result. Stages derived from it are plain {@link CompletableFuture}s.
 */
final class OpFuture extends CompletableFuture<Tensor> {
    private final CollectiveClient engine;

    OpFuture(CollectiveClient engine) {
        this.engine = engine;
    }

    @Override
    public Tensor join() {
        help(Long.MAX_VALUE, false);
        return super.join();
    }

    @Override
    public Tensor get() throws InterruptedException, ExecutionException {
        help(Long.MAX_VALUE, true);
        return super.get();
    }

    @Override
    public Tensor get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
            TimeoutException {
        long nanos = unit.toNanos(timeout);
        long start = System.nanoTime();
        help(nanos, true);
        return super.get(Math.max(0, nanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
    }

    /**
     * Drives the engine until this op is done or {@code nanos} have passed (then the plain wait takes over).
     * An interrupt ends a {@code join} with a {@link KoloInterruptedException} (a plain join would ignore it);
     * for a {@code get}, the plain wait then throws the InterruptedException its contract names.
     */
    private void help(long nanos, boolean interruptible) {
        if (isDone() || nanos <= 0) {
            return;
        }
        long now = System.nanoTime();
        long deadline = nanos >= Long.MAX_VALUE / 2 ? now + Long.MAX_VALUE / 2 : now + nanos;
        try {
            engine.drive(this, deadline);
        } catch (Deadlines.KoloTimeout ignored) {
            // the plain wait reports it
        } catch (KoloInterruptedException e) {
            if (!interruptible) {
                throw e;
            }
        }
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
