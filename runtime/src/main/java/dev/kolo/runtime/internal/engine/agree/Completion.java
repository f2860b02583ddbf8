package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.engine.op.PendingOp;

/**
 * How a finished op reaches its caller, and how a generation ends: implemented by the client that holds the ops in
 * flight by name, which the generations and the drive stage see only as this.
 */
public interface Completion {
    /** {@code op} is done, with {@code result} or {@code error} (a null {@code op} is ignored). */
    void finish(PendingOp op, Tensor result, Throwable error);

    /** Ends generation {@code g} with {@code cause}: its data plane stops and its pending ops fail. */
    void abort(RankGeneration g, KoloException cause);

    /** @return the op in flight under {@code name}, or null */
    PendingOp pending(String name);
}
