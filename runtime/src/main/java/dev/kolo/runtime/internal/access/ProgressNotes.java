package dev.kolo.runtime.internal.access;

/** Where Kolo's modules note, for the worker's status page, what they did for the training program. */
public interface ProgressNotes {
    /** The elastic state committed at the program's current step. */
    void committed();

    /** The checkpointer saved the checkpoint of {@code step} to {@code where} (its stores). */
    void checkpointed(long step, String where);

    /** A sampler measured this rank's pace against the others' (e.g. {@code 1.52x straggler}); shown in its row. */
    void pace(String note);

    /** @return the time this rank's program threads have spent waiting for collectives, in nanoseconds */
    long waitedNanos();
}
