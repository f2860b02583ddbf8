package dev.kolo.elastic.internal;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Where the ranks of a fixed job agree, at a step boundary, that the job stops there: one rank was asked to stop
 * (SIGTERM: a preemption, a drain) and the others learn it at the same step, so that all commit and checkpoint the
 * same step. A rank learns of its own signal at any moment; agreeing on it takes a collective, and a blocking one at
 * every step would cost every step a round trip. So the agreement is pipelined: at each boundary a rank reads the
 * result of the tiny allreduce it started at the previous boundary (it completed long ago, behind the step's
 * gradients) and starts the next with its flag of now. Every rank reads the same results in the same order, so all
 * stop at the same boundary: the second one after the signal, at the latest.
 *
 * <p>The flag each rank contributes is its rank plus one when it was asked to stop, else 0; the maximum names a rank
 * that was asked. Used by one training thread.
 */
public final class StepAgreement {
    /** The allreduce's op name: the same at every step (one is in flight at a time). */
    public static final String OP = "kolo.elastic.step";

    private CompletableFuture<Tensor> pending;
    /** Read by a shutdown hook: a loop that marks no steps cannot stop at one, and is not waited for. */
    private volatile boolean used;

    /**
     * One step boundary: every rank calls it after each step, the same number of times.
     *
     * @param asked whether this rank was asked to stop
     * @return -1 to go on, or the rank that was asked to stop (every rank gets the same answer at the same boundary;
     *     no agreement is in flight afterwards)
     * @throws KoloException if a worker is lost or the agreement fails (as for any collective)
     */
    public int atBoundary(Kolo kolo, boolean asked) {
        used = true;
        if (pending != null) {
            int flag = join(pending).toIntArray()[0];
            pending = null;
            if (flag > 0) {
                return flag - 1;
            }
        }
        pending = kolo.allreduceAsync(OP, Tensor.of(new int[] {asked ? kolo.rank() + 1 : 0}, 1), ReduceOp.MAX);
        return -1;
    }

    /** @return true once a step boundary was marked: the training loop calls {@code stepDone()} (thread-safe) */
    public boolean used() {
        return used;
    }

    /**
     * Waits for the agreement in flight, if any: training ended on every rank after the same number of steps, so
     * each completes it, and none leaves with an op its peers still run. Its answer no longer matters.
     */
    public void drain() {
        if (pending != null) {
            CompletableFuture<Tensor> p = pending;
            pending = null;
            join(p);
        }
    }

    /** The run failed (a lost worker): the agreement in flight fails with it, and nobody waits for it. */
    public void forget() {
        pending = null;
    }

    private static Tensor join(CompletableFuture<Tensor> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }
}
