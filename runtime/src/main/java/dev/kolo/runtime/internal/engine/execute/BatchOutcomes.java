package dev.kolo.runtime.internal.engine.execute;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.engine.op.PendingOp;

/**
 * Where the execution's outcomes go: each op's result or failure to its caller, and, when a failure leaves the
 * ranks unable to go on (a lost worker, a bug), the end of the generation the batch ran in.
 */
public interface BatchOutcomes {
    /** {@code op} is done, with {@code result} or {@code error}. */
    void finish(PendingOp op, Tensor result, Throwable error);

    /** The generation cannot go on: it ends with {@code cause}. */
    void endGeneration(KoloException cause);
}
