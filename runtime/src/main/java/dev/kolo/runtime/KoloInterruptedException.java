package dev.kolo.runtime;

/**
 * A thread waiting for a collective was interrupted: the wait ended early, the thread's interrupt status is
 * still set, and the cause is an {@link InterruptedException}. The op itself was not withdrawn (the other
 * ranks may be running it already): it runs on every rank once all have submitted it, and its result on this
 * rank is discarded.
 */
public class KoloInterruptedException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** @param message what the thread was waiting for, and what became of it */
    public KoloInterruptedException(String message) {
        super(message, new InterruptedException());
    }
}
