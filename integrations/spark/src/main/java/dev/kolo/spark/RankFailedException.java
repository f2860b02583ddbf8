package dev.kolo.spark;

import dev.kolo.runtime.KoloException;

/**
 * A rank's training failed: thrown on the driver by {@link KoloDistributor}'s {@code run}, naming the rank, its
 * executor and host; the rank's own exception is the cause when Spark could carry it back (it travels serialized,
 * its message always does).
 */
public final class RankFailedException extends KoloException {
    private static final long serialVersionUID = 1L;

    private final int rank;
    private final String executorId;

    /**
     * @param rank       the failed rank (the barrier task's partition)
     * @param size       the number of ranks
     * @param executorId the executor the rank ran in
     * @param host       that executor's host
     * @param cause      what the rank threw
     */
    public RankFailedException(int rank, int size, String executorId, String host, Throwable cause) {
        super("rank " + rank + " of " + size + " (Spark executor " + executorId + " on " + host + ") failed: "
                + cause, cause);
        this.rank = rank;
        this.executorId = executorId;
    }

    /** @return the failed rank */
    public int rank() {
        return rank;
    }

    /** @return the Spark executor the rank ran in */
    public String executorId() {
        return executorId;
    }
}
