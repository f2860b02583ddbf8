package dev.kolo.elastic;

import dev.kolo.runtime.KoloException;

/**
 * {@link Elastic#run} cannot go on, and says why in one line: a worker was lost in a job that is not
 * elastic (naming the lost rank and how to resume), no new generation formed in time (too few workers,
 * or this side holds no majority), the reset limit was reached, or this worker is refused by the
 * blacklist. A process should print the message and exit with {@link #exitStatus()}.
 */
public final class ElasticJobFailedException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** The exit status {@link Elastic#runOrExit} uses. */
    public static final int EXIT_STATUS = 3;

    ElasticJobFailedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** @return the non-zero process exit status for this failure ({@value #EXIT_STATUS}) */
    public int exitStatus() {
        return EXIT_STATUS;
    }
}
