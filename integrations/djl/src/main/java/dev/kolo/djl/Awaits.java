package dev.kolo.djl;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for a collective started asynchronously, within the job's {@code KOLO_OP_TIMEOUT}. */
final class Awaits {
    private Awaits() {
    }

    /**
     * @return the future's value
     * @throws KoloException the op's own exception, unwrapped; or one naming the deadline, or the interrupt
     *     (the thread's interrupt status stays set)
     */
    static <T> T await(Kolo kolo, CompletableFuture<T> future, String name) {
        long seconds = kolo.config().opTimeout().toSeconds();
        try {
            return future.get(kolo.config().opTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new KoloException(name + ": " + cause, cause);
        } catch (TimeoutException e) {
            throw new KoloException("'" + name + "' did not complete within " + seconds + " s (KOLO_OP_TIMEOUT); "
                    + "the coordinator logs which ranks never submitted it");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted while waiting for '" + name + "'", e);
        }
    }
}
