package dev.kolo.runtime.internal.engine.op;

import java.util.concurrent.CompletableFuture;

/**
 * What a thread waiting on a {@link PendingOp} asks of the engine: to drive it until the op is done, and, when it
 * leaves without the result, to let go of the op's tensors first. The op sees this, not the client that made it.
 */
public interface OpDriver {
    /**
     * Waits until {@code f} is done, driving the engine meanwhile when no other thread does.
     *
     * @throws Deadlines.KoloTimeout past the System.nanoTime() {@code deadline}
     */
    void drive(CompletableFuture<?> f, long deadline);

    /** Returns once the engine no longer uses {@code op}'s tensors (a caller leaves without its result). */
    void letGo(PendingOp op);
}
