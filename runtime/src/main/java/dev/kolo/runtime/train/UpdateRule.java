package dev.kolo.runtime.train;

/**
 * Applies an averaged gradient to its parameter: the local optimizer that {@link DistributedOptimizer}
 * wraps (SGD, Adam, ...). Called once per parameter per step, on the training thread, after
 * {@link Parameter#gradient()} holds the gradient averaged over every rank and backward pass.
 */
@FunctionalInterface
public interface UpdateRule {
    /** Updates {@code p.values()} in place from {@code p.gradient()}. */
    void apply(Parameter p, double learningRate);
}
