package dev.kolo.elastic;

import dev.kolo.runtime.KoloException;

/**
 * Thrown by {@link ElasticState#commit()} on every rank at the same commit when the ranks agreed that the
 * membership changes there: workers wait to join, or a worker asked to leave. The state was just
 * committed, so nothing rolls back. {@link Elastic#run} catches it and regroups; training code should let
 * it pass (do not catch {@code RuntimeException} around {@code commit()}).
 */
public final class MembershipChangedException extends KoloException {
    private static final long serialVersionUID = 1L;
    private final boolean selfLeaving;

    MembershipChangedException(String message, boolean selfLeaving) {
        super(message);
        this.selfLeaving = selfLeaving;
    }

    /** @return true on the worker that asked to leave (it leaves the job; the others regroup without it) */
    public boolean selfLeaving() {
        return selfLeaving;
    }
}
