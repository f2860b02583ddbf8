package dev.kolo.elastic;

/**
 * Called on every rank after each reset of {@link Elastic#run} (a lost worker or a membership change),
 * once the new ring is up and the state synchronized: rescale the learning rate by the new size,
 * re-partition the data for the new rank and size. Runs on the training thread.
 */
@FunctionalInterface
public interface ResetCallback {
    /** @param event the new size, rank, generation and why */
    void onReset(ResetEvent event);
}
