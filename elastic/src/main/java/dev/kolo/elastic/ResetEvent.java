package dev.kolo.elastic;

/**
 * What changed at a reset, given to every {@link ResetCallback} after the new ring is built and the state
 * synchronized, before the training function runs again.
 *
 * @param reason why the job regrouped
 * @param previousSize number of workers before
 * @param size number of workers now ({@code kolo.size()})
 * @param rank this worker's new rank
 * @param generation the new generation
 * @param commit the commit the job continues from (the committed step count)
 * @param rolledBack true if live state was rolled back to the last commit (a lost worker)
 */
public record ResetEvent(Reason reason, int previousSize, int size, int rank, long generation, long commit,
        boolean rolledBack) {

    /** Why a reset happened. */
    public enum Reason {
        /** a worker died or was fenced: survivors rolled back to the last commit */
        WORKER_LOST,
        /** workers joined or one left at a commit: no rollback */
        MEMBERSHIP_CHANGED
    }

    /** @return {@code size / previousSize}, e.g. to rescale a learning rate linearly in the worker count */
    public double scale() {
        return (double) size / previousSize;
    }
}
