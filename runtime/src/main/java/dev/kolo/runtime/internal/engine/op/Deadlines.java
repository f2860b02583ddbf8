package dev.kolo.runtime.internal.engine.op;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.KoloInterruptedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Bounded waits on futures: every wait in the runtime has a deadline, and its caller names what timed out. */
public final class Deadlines {
    private Deadlines() {
    }

    /** Waits for {@code f} until the System.nanoTime() {@code deadline}, unwrapping a KoloException. */
    public static <T> T await(CompletableFuture<T> f, long deadline) {
        try {
            if (f.isDone()) {
                return f.get(); // the usual case after a caller drove its own op: no clock to read
            }
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new KoloTimeout();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloInterruptedException("interrupted while waiting; the interrupt status is kept set");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof KoloException ke) {
                throw ke;
            }
            if (cause instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw new KoloException(String.valueOf(cause), cause);
        }
    }

    /** A wait ran past its deadline; callers turn it into a message that names what was waited for. */
    public static final class KoloTimeout extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public KoloTimeout() {
            super(null, null, false, false);
        }
    }
}
