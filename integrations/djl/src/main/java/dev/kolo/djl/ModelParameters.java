package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.nn.Block;
import ai.djl.util.Pair;
import dev.kolo.runtime.train.Parameter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * A DJL block's trainable parameters as Kolo {@link Parameter}s: Kolo's optimizer, checkpoints and elastic
 * state work on the {@code float[]} copies, and this class moves values and gradients between them and the
 * engine's arrays. {@link DistributedTrainer} is built on it; use it directly to plug a DJL model into a
 * training loop written around {@link dev.kolo.runtime.train.DistributedOptimizer}.
 */
public final class ModelParameters {
    private final List<ai.djl.nn.Parameter> engine;
    private final List<Parameter> parameters;
    private final List<EngineArrays> arrays;
    /** The block's other parameters that are not buffers (frozen when this was built), and their names. */
    private final List<ai.djl.nn.Parameter> frozen;
    private final List<String> frozenNames;

    private ModelParameters(List<ai.djl.nn.Parameter> engine, List<Parameter> parameters, List<EngineArrays> arrays,
                            List<ai.djl.nn.Parameter> frozen, List<String> frozenNames) {
        this.engine = engine;
        this.parameters = parameters;
        this.arrays = arrays;
        this.frozen = frozen;
        this.frozenNames = frozenNames;
    }

    /**
     * @param block an initialized block (e.g. after {@code trainer.initialize(inputShape)})
     * @throws IllegalStateException if a parameter is not initialized
     * @throws IllegalArgumentException if a parameter is not float32, or there is none to train
     */
    public static ModelParameters of(Block block) {
        EngineHeap.tuneOnce();
        List<ai.djl.nn.Parameter> engine = new ArrayList<>();
        List<Parameter> mirrors = new ArrayList<>();
        List<EngineArrays> arrays = new ArrayList<>();
        List<ai.djl.nn.Parameter> frozen = new ArrayList<>();
        List<String> frozenNames = new ArrayList<>();
        for (Pair<String, ai.djl.nn.Parameter> named : block.getParameters()) {
            ai.djl.nn.Parameter p = named.getValue();
            if (ModelExchange.isBuffer(p)) {
                continue; // ModelBuffers keeps those
            }
            if (!p.requiresGradient()) {
                frozen.add(p);
                frozenNames.add(named.getKey());
                continue;
            }
            if (!p.isInitialized()) {
                throw new IllegalStateException("parameter '" + named.getKey() + "' is not initialized: initialize "
                        + "the model (trainer.initialize(inputShape)) before handing it to Kolo");
            }
            NDArray array = p.getArray();
            if (array.getDataType() != DataType.FLOAT32) {
                throw new IllegalArgumentException("parameter '" + named.getKey() + "' is " + array.getDataType()
                        + ": Kolo trains float32 parameters (convert the model with Block.cast(DataType.FLOAT32))");
            }
            int size = Math.toIntExact(array.size());
            float[] values = new float[size];
            EngineArrays view = new EngineArrays();
            view.readValues(array, values);
            engine.add(p);
            arrays.add(view);
            mirrors.add(Parameter.of(named.getKey(), values, new float[size], array.getShape().getShape()));
        }
        if (mirrors.isEmpty()) {
            throw new IllegalArgumentException("the block has no trainable parameter");
        }
        return new ModelParameters(List.copyOf(engine), Collections.unmodifiableList(mirrors), List.copyOf(arrays),
                List.copyOf(frozen), List.copyOf(frozenNames));
    }

    private static IllegalStateException trainedSetChanged(String name, String how) {
        return new IllegalStateException("parameter '" + name + "' was " + how + " after the model was handed to "
                + "Kolo, whose optimizer trains the parameters that required a gradient then: build a new "
                + "DistributedTrainer (or ModelParameters) after freezing or unfreezing parameters, or train with "
                + "KoloTrainer, which follows such changes at every step");
    }

    /** @return the Kolo copies, in the block's order (names are the block's parameter names) */
    public List<Parameter> parameters() {
        return parameters;
    }

    /** Copies the engine's values into the Kolo copies (after the model was loaded or changed by DJL). */
    public void readValues() {
        for (int i = 0; i < parameters.size(); i++) {
            arrays.get(i).readValues(engine.get(i).getArray(), parameters.get(i).values());
        }
    }

    /** Copies the Kolo copies' values into the engine (after an update, a broadcast or a restore). */
    public void writeValues() {
        for (int i = 0; i < parameters.size(); i++) {
            arrays.get(i).writeValues(engine.get(i).getArray(), parameters.get(i).values());
        }
    }

    /**
     * Copies every gradient of the last backward pass into its Kolo copy, clears it in the engine (so the
     * next pass starts from zero), and hands each parameter to {@code ready}, last layer first: the order a
     * backward pass completes them in.
     *
     * @throws IllegalStateException naming the parameter, if one was frozen or unfrozen since this was built: the
     *     parameters trained are fixed here (Kolo's update rule keeps state for each of them)
     */
    public void takeGradients(Consumer<Parameter> ready) {
        for (int i = 0; i < engine.size(); i++) {
            if (!engine.get(i).requiresGradient()) {
                throw trainedSetChanged(parameters.get(i).name(), "frozen");
            }
        }
        for (int i = 0; i < frozen.size(); i++) {
            if (frozen.get(i).requiresGradient()) {
                throw trainedSetChanged(frozenNames.get(i), "unfrozen");
            }
        }
        for (int i = parameters.size() - 1; i >= 0; i--) {
            arrays.get(i).takeGradient(engine.get(i).getArray(), parameters.get(i).gradient());
            ready.accept(parameters.get(i));
        }
    }
}
