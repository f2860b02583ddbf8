package dev.kolo.djl;

import ai.djl.Model;
import ai.djl.nn.Block;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.DistributedOptimizer;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.Sgd;
import dev.kolo.runtime.train.UpdateRule;
import java.util.List;

/**
 * Data-parallel training of a DJL model over the workers of a Kolo job. Use it in place of DJL's
 * {@code Trainer.step()}:
 *
 * <pre>{@code
 * DistributedTrainer dist = DistributedTrainer.builder(kolo, model)
 *         .updateRule(new Sgd(0.9, 0)).compression(Compression.FP16).build();
 * dist.broadcastParameters(0);                     // every rank starts from rank 0's weights
 * for (Batch batch : ...) {
 *     try (GradientCollector gc = trainer.newGradientCollector()) {
 *         NDArray loss = trainer.getLoss().evaluate(batch.getLabels(), trainer.forward(batch.getData()));
 *         gc.backward(loss);
 *     }
 *     dist.step(learningRate);                     // averages the gradients over all ranks, then updates
 * }
 * }</pre>
 *
 * <p>Each parameter's gradient is submitted as a named tensor as soon as the backward pass is over (DJL runs the
 * whole backward pass in one call, so the exchange cannot overlap it), the runtime fuses them into ring
 * operations, and the update rule runs on Kolo's copy of the parameters, whose state (an {@link Sgd}'s
 * velocity, Adam's moments) is therefore available to checkpoints and elastic commits; the updated values are
 * written back into the model's arrays. Parameters and gradients are copied between the engine's memory and Kolo's arrays
 * once per step each way: where the engine's array lies in CPU memory the copy reads and writes it in place
 * through {@link ai.djl.ndarray.NDArray#toByteBuffer(boolean)}, with no further allocation.
 *
 * <p>Every rank must build the same model (parameter names and shapes) and call {@link #step} the same number
 * of times. One training thread.
 */
public final class DistributedTrainer {
    private final Kolo kolo;
    private final ModelParameters model;
    private final DistributedOptimizer optimizer;
    /** The buffers (running statistics such as BatchNorm's), exchanged in the engine's memory. */
    private final ModelBuffers buffers;

    private DistributedTrainer(Builder b) {
        this.kolo = b.kolo;
        this.model = ModelParameters.of(b.block);
        this.buffers = ModelBuffers.of(b.kolo, b.block);
        this.optimizer = DistributedOptimizer.builder(kolo, model.parameters()).updateRule(b.rule)
                .compression(b.compression).reduceOp(b.reduceOp).backwardPassesPerStep(b.passesPerStep)
                .namePrefix(b.prefix).build();
    }

    /**
     * @param model a model whose block is initialized (e.g. by {@code trainer.initialize(inputShape)})
     */
    public static Builder builder(Kolo kolo, Model model) {
        return new Builder(kolo, model.getBlock());
    }

    /** @param block an initialized block (the model's, or part of it) */
    public static Builder builder(Kolo kolo, Block block) {
        return new Builder(kolo, block);
    }

    /**
     * Overwrites every parameter and buffer with rank {@code rootRank}'s values, so that all ranks start from the
     * same model: call once on every rank after initializing or loading the model.
     */
    public void broadcastParameters(int rootRank) {
        model.readValues();
        optimizer.broadcastParameters(rootRank);
        model.writeValues();
        buffers.broadcast(rootRank);
    }

    /**
     * Ends a backward pass: takes every parameter's gradient from the model (and clears it there, so the next
     * pass starts from zero), and on the last pass of a step averages the gradients over all ranks and passes,
     * applies the update rule and writes the new values into the model. The buffers (BatchNorm's running
     * statistics: parameters DJL types RUNNING_MEAN or RUNNING_VAR) are averaged over the ranks with the
     * gradients, so they stay equal on every rank; frozen parameters are not sent.
     *
     * @return true if the parameters were updated, false if this pass only accumulated (backward passes per step)
     * @throws dev.kolo.runtime.KoloException if a collective fails (a lost worker, for instance)
     * @throws IllegalStateException naming the parameter, if one was frozen or unfrozen since this was built
     */
    public boolean step(double learningRate) {
        model.takeGradients(optimizer::gradientReady);
        boolean completesStep = (optimizer.passes() + 1) % optimizer.backwardPassesPerStep() == 0;
        if (completesStep) {
            buffers.startAverage();
        }
        boolean updated;
        try {
            updated = optimizer.step(learningRate);
        } catch (RuntimeException e) {
            buffers.dropAverage(); // the step's own failure is the one to report
            throw e;
        }
        if (!updated) {
            return false;
        }
        buffers.awaitAverage();
        model.writeValues();
        return true;
    }

    /**
     * @return the mean of {@code value} over all ranks (a loss or an accuracy for logging and evaluation);
     *     every rank must call it with the same {@code name} at the same point
     */
    public double average(String name, double value) {
        return kolo.allreduce("metric." + name, Tensor.of(new double[] {value}), ReduceOp.AVERAGE)
                .toDoubleArray()[0];
    }

    /**
     * Registers the parameters, the buffers (as the engine's own memory) and the update rule's state for the
     * parameters (an {@link Sgd}'s velocity, Adam's moments and step counts: see {@link ElasticState#updateRule})
     * with {@code state}, so that commits and checkpoints hold everything the next step depends on; after a
     * restore call {@link #loadParameters()}.
     */
    public DistributedTrainer register(ElasticState state) {
        state.parameters(model.parameters()).updateRule(optimizer.updateRule(), model.parameters());
        buffers.register(state);
        return this;
    }

    /** Writes Kolo's copy of the parameters into the model (after {@link ElasticState#restore()}). */
    public void loadParameters() {
        model.writeValues();
    }

    /** @return Kolo's copy of the model's trainable parameters, in the block's order */
    public List<Parameter> parameters() {
        return model.parameters();
    }

    /** @return the optimizer underneath (steps, passes, compression) */
    public DistributedOptimizer optimizer() {
        return optimizer;
    }

    /** What to train with. */
    public static final class Builder {
        private final Kolo kolo;
        private final Block block;
        private UpdateRule rule = new Sgd(0.9, 0);
        private Compression compression = Compression.NONE;
        private int passesPerStep = 1;
        private ReduceOp reduceOp = ReduceOp.AVERAGE;
        private String prefix = "djl.";

        private Builder(Kolo kolo, Block block) {
            this.kolo = kolo;
            this.block = block;
        }

        /** The update rule (default: SGD with momentum 0.9, no weight decay). */
        public Builder updateRule(UpdateRule rule) {
            this.rule = rule;
            return this;
        }

        /** How gradients travel (default: float32, uncompressed). */
        public Builder compression(Compression compression) {
            this.compression = compression;
            return this;
        }

        /**
         * How the ranks' gradients combine: {@link ReduceOp#AVERAGE} (the default), {@link ReduceOp#SUM} or
         * {@link ReduceOp#ADASUM} (see {@link DistributedOptimizer.Builder#reduceOp}).
         */
        public Builder reduceOp(ReduceOp op) {
            this.reduceOp = op;
            return this;
        }

        /** Backward passes accumulated into each step (default 1). */
        public Builder backwardPassesPerStep(int passes) {
            this.passesPerStep = passes;
            return this;
        }

        /** Prefix of the tensor names the gradients travel under (default {@code djl.}). */
        public Builder namePrefix(String prefix) {
            this.prefix = prefix;
            return this;
        }

        /**
         * @throws IllegalStateException if the block is not initialized
         * @throws IllegalArgumentException if it has no trainable float32 parameter
         */
        public DistributedTrainer build() {
            return new DistributedTrainer(this);
        }
    }
}
