package dev.kolo.runtime;

/**
 * Base of every error Kolo raises to training code. Unchecked: a failed collective, a rendezvous that
 * could not complete, or bad configuration. The message always names the cause and, where a user can
 * act, what to change.
 */
public class KoloException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what went wrong and how to fix it */
    public KoloException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong and how to fix it
     * @param cause the underlying failure
     */
    public KoloException(String message, Throwable cause) {
        super(message, cause);
    }
}
