package dev.kolo.checkpoint;

/** What {@link Checkpointer#save} does when the previous asynchronous save is still being written. */
public enum InFlightPolicy {
    /**
     * Wait (up to the checkpointer's save timeout) for the previous save to finish, then snapshot. Every
     * requested checkpoint is written; training pauses only if saves are requested faster than the disk
     * takes them.
     */
    WAIT,
    /**
     * Do not save: the returned future completes at once with {@link SaveResult.Status#SKIPPED_IN_FLIGHT}.
     * Training never waits; the next save after the write finishes is taken.
     */
    SKIP
}
