package dev.kolo.runtime;

/**
 * A worker cannot start because of its configuration: a setting, or a file or resource a setting names, is
 * wrong (no job secret outside local discovery, unreadable or mismatched TLS files, native kernels asked for
 * where they cannot load). Retrying does not help; the message says what to change. {@code worker.jar} exits
 * with {@link #EXIT_STATUS} for it, as for a setting refused with {@link IllegalArgumentException}.
 */
public class KoloConfigurationException extends KoloException {
    private static final long serialVersionUID = 1L;
    /** Exit status of {@code worker.jar} for a configuration error: 78, {@code EX_CONFIG} of sysexits.h. */
    public static final int EXIT_STATUS = 78;

    /** @param message what is wrong and how to fix it */
    public KoloConfigurationException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong and how to fix it
     * @param cause the underlying failure
     */
    public KoloConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
