package dev.kolo.runtime.train;

/**
 * Applies an averaged gradient to its parameter: the local optimizer that {@link DistributedOptimizer}
 * wraps (SGD, Adam, ...). Called once per parameter per step, on the training thread, after
 * {@link Parameter#gradient()} holds the gradient averaged over every rank and backward pass.
 *
 * <p>A rule that keeps state between steps (momentum, moment estimates, step counts) describes it through
 * {@link #state}, so that elastic commits and checkpoints can hold it next to the parameters: a training run
 * restored from them then continues exactly as it would have.
 */
@FunctionalInterface
public interface UpdateRule {
    /** Updates {@code p.values()} in place from {@code p.gradient()}. */
    void apply(Parameter p, double learningRate);

    /**
     * Hands every array of state this rule keeps for {@code p} to {@code sink}, live (not copies: writing
     * them changes the next step), each under a name that starts with {@code p.name()}. The state is created
     * now if {@code p} has not been stepped yet, so it can be registered before training. Default: none.
     */
    default void state(Parameter p, StateSink sink) {
    }

    /** Receives a rule's live state arrays (for instance to register them with an elastic state). */
    interface StateSink {
        /** A float32 array of state, e.g. a moment estimate with the parameter's shape. */
        void floats(String name, float[] live, long[] shape);

        /** An int64 array of state, e.g. a step count of shape {@code [1]}. */
        void longs(String name, long[] live, long[] shape);
    }
}
