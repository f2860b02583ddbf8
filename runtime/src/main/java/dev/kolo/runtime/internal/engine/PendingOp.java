package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.control.OpSpec;
import java.util.concurrent.CompletableFuture;

/** An op this rank has submitted and not yet seen complete. */
final class PendingOp {
    final OpSpec spec;
    final Tensor input;
    /** Where an allreduce writes its result (the input itself for an in-place one), or null for a new tensor. */
    final Tensor output;
    final CompletableFuture<Tensor> future;
    final RankGeneration generation;
    final long submitNanos = System.nanoTime();
    /** The cache id under which it waits in the agreement rounds, or -1 (new, or sent to the coordinator). */
    int cacheId = -1;
    // The outcome, set under the engine lock and delivered to the future once the lock is let go.
    Tensor result;
    Throwable error;

    PendingOp(OpSpec spec, Tensor input, Tensor output, RankGeneration generation, CompletableFuture<Tensor> future) {
        this.future = future;
        this.spec = spec;
        this.input = input;
        this.output = output;
        this.generation = generation;
    }
}
