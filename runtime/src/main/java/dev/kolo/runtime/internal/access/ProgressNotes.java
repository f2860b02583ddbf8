package dev.kolo.runtime.internal.access;

/** Where Kolo's modules note, for the worker's status page, what they did for the training program. */
public interface ProgressNotes {
    /** The elastic state committed at the program's current step. */
    void committed();

    /** The checkpointer saved the checkpoint of {@code step} to {@code where} (its stores). */
    void checkpointed(long step, String where);
}
