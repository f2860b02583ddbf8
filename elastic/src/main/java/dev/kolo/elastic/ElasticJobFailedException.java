package dev.kolo.elastic;

import dev.kolo.runtime.KoloException;

/**
 * {@link Elastic#run} cannot go on, and says why in one line: a worker was lost in a job that is not
 * elastic (naming the lost rank and how to resume), no new generation formed in time (too few workers,
 * or this side holds no majority), the reset limit was reached, or this worker is refused by the
 * blacklist; or a fixed job stopped as asked (SIGTERM: a preemption, a drain), its last step committed and
 * checkpointed ({@link #stopped()}). A process should print the message and exit with {@link #exitStatus()}.
 */
public final class ElasticJobFailedException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** The exit status {@link Elastic#runOrExit} uses for a job that cannot go on. */
    public static final int EXIT_STATUS = 3;

    /**
     * The exit status of every worker of a fixed job that stopped as asked, at a step whose state is checkpointed:
     * sysexits' {@code EX_TEMPFAIL} (try again later). A Kubernetes Job's or JobSet's pod failure policy counts it as
     * a disruption, not a failure (the manifests in k8s-manifests/ do), so the restarted job resumes from that step
     * without using up a retry.
     */
    public static final int STOPPED_STATUS = 75;

    private final boolean stopped;

    ElasticJobFailedException(String message, Throwable cause) {
        this(message, cause, false);
    }

    private ElasticJobFailedException(String message, Throwable cause, boolean stopped) {
        super(message, cause);
        this.stopped = stopped;
    }

    /** A fixed job stopped as asked, at a step it committed and checkpointed; {@code message} says where. */
    static ElasticJobFailedException stoppedAsAsked(String message) {
        return new ElasticJobFailedException(message, null, true);
    }

    /** @return true when the job stopped as asked, its last step checkpointed, rather than failed */
    public boolean stopped() {
        return stopped;
    }

    /**
     * @return the non-zero process exit status: {@value #STOPPED_STATUS} when {@link #stopped()}, else
     *     {@value #EXIT_STATUS}
     */
    public int exitStatus() {
        return stopped ? STOPPED_STATUS : EXIT_STATUS;
    }
}
