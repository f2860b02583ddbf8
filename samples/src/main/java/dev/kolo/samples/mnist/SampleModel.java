package dev.kolo.samples.mnist;

import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.train.Parameter;
import java.util.List;
import java.util.function.Consumer;

/**
 * A classifier of 28x28 images the sample trains: its parameters as Kolo {@link Parameter}s (the optimizer
 * updates their values, commits and checkpoints hold them), a training forward and backward pass, and an
 * evaluation pass. Batches are flat rows of {@code pixels} floats in [0, 1].
 */
interface SampleModel {
    /** @return the trainable parameters, in a fixed order, named the same on every rank */
    List<Parameter> parameters();

    /** @return the largest batch a pass takes */
    int maxBatch();

    /**
     * Forward pass of a training batch, from the current parameter values.
     *
     * @return the mean cross-entropy loss of the batch
     */
    double forward(float[] x, int[] y, int n);

    /** Backward pass of the last {@link #forward}: fills every gradient and reports each, last layer first. */
    void backward(Consumer<Parameter> ready);

    /**
     * Forward pass without training (no gradients kept).
     *
     * @return the mean cross-entropy loss of the batch
     */
    double evaluate(float[] x, int[] y, int n);

    /** @return how many of the last pass's examples were classified as their label */
    int correct();

    /** @return the architecture, for the start line */
    String describe();

    /**
     * Called before the optimizer's step that ends a step's backward passes: starts keeping the model's buffers
     * (BatchNorm's running statistics) equal on every rank, so that it fuses with the gradients.
     */
    default void startStep() {
    }

    /** Called after that step: waits for what {@link #startStep} started, or drops it if the step failed. */
    default void endStep(boolean failed) {
    }

    /** Registers the model's state beyond its {@link #parameters()} (its buffers) with {@code state}. */
    default void register(ElasticState state) {
    }

    /** @return the values of the model's buffers, in a fixed order (none by default), for the checksum */
    default float[] bufferValues() {
        return new float[0];
    }
}
