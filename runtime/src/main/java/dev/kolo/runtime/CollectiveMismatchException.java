package dev.kolo.runtime;

/**
 * Ranks submitted the same tensor name with disagreeing attributes (dtype, shape, op, root, scale).
 * Raised on every rank that took part; the job goes on and the next collective works.
 */
public class CollectiveMismatchException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** @param message names the tensor, the attribute and the ranks that differ */
    public CollectiveMismatchException(String message) {
        super(message);
    }
}
