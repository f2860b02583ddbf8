package dev.kolo.elastic;

import dev.kolo.runtime.KoloException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Joins runtime futures, rethrowing the runtime's own exception unwrapped (as Kolo's blocking calls do). */
final class Waits {
    private Waits() {
    }

    /** Waits for {@code f}; the runtime bounds every collective by {@code KOLO_OP_TIMEOUT}. */
    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw unwrap(e);
        }
    }

    /** @return the innermost KoloException or unchecked cause of a wrapped failure */
    static RuntimeException unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof RuntimeException re) {
            return re;
        }
        return new KoloException(String.valueOf(c), c);
    }
}
