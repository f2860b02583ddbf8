package dev.kolo.runtime.internal.access;

/**
 * A worker of the current generation that left the cluster.
 *
 * @param rank its rank in that generation
 * @param host its host
 */
public record Departure(int rank, String host) {
}
