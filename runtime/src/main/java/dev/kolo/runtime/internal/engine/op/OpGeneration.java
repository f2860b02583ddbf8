package dev.kolo.runtime.internal.engine.op;

import dev.kolo.runtime.KoloException;

/**
 * The generation an op was submitted to, as those holding the op see it: which one it is, whether it has ended
 * and why, and a way to end it (a caller that gave up on an op whose tensors the data plane still holds).
 */
public interface OpGeneration {
    /** @return the generation's number */
    long number();

    /** @return why the generation ended, or null while it runs */
    KoloException abortCause();

    /** Ends the generation with {@code cause}: its data plane stops and its pending ops fail. */
    void end(KoloException cause);
}
