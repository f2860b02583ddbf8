package dev.kolo.runtime.internal.collectives.algorithm;

/**
 * One collective algorithm over a generation's peers (Gloo's algorithm objects): built once per generation, with the
 * scratch it needs, and run for each call on the one {@link OpDescription} its plane fills anew. Runs on the calling
 * thread; every rank runs the same algorithm with the same description but its own buffers.
 */
public interface Algorithm {
    /** Runs the op {@code op} describes; its buffers are the caller's, its results land in them. */
    void run(OpDescription op);
}
