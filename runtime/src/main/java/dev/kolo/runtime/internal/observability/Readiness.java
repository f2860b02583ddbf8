package dev.kolo.runtime.internal.observability;

/**
 * What {@code /health/ready} answers: whether this worker takes part in a running generation, and a line
 * that says which (when ready) or why not.
 */
public record Readiness(boolean ready, String detail) {
}
