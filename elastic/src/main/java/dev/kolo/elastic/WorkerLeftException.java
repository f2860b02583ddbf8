package dev.kolo.elastic;

import dev.kolo.runtime.KoloException;

/**
 * Thrown by {@link Elastic#run} on a worker that left the job at a commit after
 * {@link ElasticState#requestLeave()} (e.g. on SIGTERM): its state was committed, its {@code Kolo} is
 * closed, and the other workers go on without it and without rollback. Not an error: exit normally.
 */
public final class WorkerLeftException extends KoloException {
    private static final long serialVersionUID = 1L;

    WorkerLeftException(String message) {
        super(message);
    }
}
