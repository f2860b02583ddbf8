package dev.kolo.samples.mnist;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import dev.kolo.djl.ModelBuffers;
import dev.kolo.djl.ModelParameters;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.train.Parameter;
import java.util.List;
import java.util.function.Consumer;

/**
 * A network of {@link DjlNetworks} in Deep Java Library on the PyTorch engine (CPU). Kolo trains it through
 * {@link ModelParameters}: the optimizer updates Kolo's copy of the parameters, which the next forward pass writes
 * into the engine; the backward pass hands each gradient to Kolo. Its buffers (BatchNorm's running statistics)
 * stay in the engine's memory and are kept equal on every rank by {@link ModelBuffers}. Not thread-safe.
 */
final class DjlModel implements SampleModel, AutoCloseable {
    /** The engine's property for its intra-op threads; read once, when the engine starts. */
    static final String THREADS_PROPERTY = "ai.djl.pytorch.num_threads";
    static final String INTEROP_THREADS_PROPERTY = "ai.djl.pytorch.num_interop_threads";
    static final int SIDE = 28;

    private final int maxBatch;
    private final Model model;
    private final Trainer trainer;
    private final ModelParameters parameters;
    private final ModelBuffers buffers;
    private final String name;
    private final float[] labels;
    private int correct;

    /**
     * @param name    {@value TrainSettings#CNN} or {@value TrainSettings#RESNET}
     * @param threads intra-op threads of the engine (several workers share a machine's cores)
     * @param seed    initial weights (every rank then starts from rank 0's: the elastic state's first sync)
     */
    DjlModel(Kolo kolo, String name, int maxBatch, long seed, int threads) {
        // The engine reads these when it starts; a worker starts it once, here.
        System.setProperty(THREADS_PROPERTY, Integer.toString(threads));
        System.setProperty(INTEROP_THREADS_PROPERTY, "1");
        System.setProperty("ai.djl.offline", System.getProperty("ai.djl.offline", "true"));
        this.maxBatch = maxBatch;
        this.labels = new float[maxBatch];
        Engine.getEngine("PyTorch").setRandomSeed((int) seed);
        this.name = name;
        this.model = Model.newInstance("fashion-mnist-" + name, "PyTorch");
        model.setBlock(name.equals(TrainSettings.RESNET) ? DjlNetworks.resnet() : DjlNetworks.cnn());
        this.trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()));
        trainer.initialize(new Shape(1, 1, SIDE, SIDE));
        this.parameters = ModelParameters.of(model.getBlock());
        this.buffers = ModelBuffers.of(kolo, model.getBlock());
    }

    @Override
    public List<Parameter> parameters() {
        return parameters.parameters();
    }

    @Override
    public int maxBatch() {
        return maxBatch;
    }

    @Override
    public double forward(float[] x, int[] y, int n) {
        return pass(x, y, n, true);
    }

    @Override
    public void backward(Consumer<Parameter> ready) {
        parameters.takeGradients(ready);
    }

    @Override
    public double evaluate(float[] x, int[] y, int n) {
        return pass(x, y, n, false);
    }

    @Override
    public int correct() {
        return correct;
    }

    @Override
    public String describe() {
        String layers = name.equals(TrainSettings.RESNET) ? "resnet stem16-res16-res32-res64-avgpool-10 (batchnorm)"
                : "cnn conv5x5x16-pool-conv5x5x32-pool-128-10";
        return layers + " (DJL " + Engine.getEngine("PyTorch").getEngineName()
                + " " + Engine.getEngine("PyTorch").getVersion() + ", " + System.getProperty(THREADS_PROPERTY)
                + " intra-op thread(s))";
    }

    private double pass(float[] x, int[] y, int n, boolean training) {
        if (n < 1 || n > maxBatch) {
            throw new IllegalArgumentException("batch of " + n + " (the model takes 1.." + maxBatch + ")");
        }
        // Kolo's copy is the truth: updated by the optimizer, or restored after a reset.
        parameters.writeValues();
        for (int i = 0; i < n; i++) {
            labels[i] = y[i];
        }
        try (NDManager batch = trainer.getManager().newSubManager()) {
            NDArray images = batch.create(java.nio.FloatBuffer.wrap(x, 0, n * SIDE * SIDE),
                    new Shape(n, 1, SIDE, SIDE));
            NDArray truth = batch.create(java.nio.FloatBuffer.wrap(labels, 0, n), new Shape(n));
            NDList out;
            NDArray loss;
            if (training) {
                try (GradientCollector gc = trainer.newGradientCollector()) {
                    out = trainer.forward(new NDList(images));
                    loss = trainer.getLoss().evaluate(new NDList(truth), out);
                    gc.backward(loss);
                }
            } else {
                out = trainer.evaluate(new NDList(images));
                loss = trainer.getLoss().evaluate(new NDList(truth), out);
            }
            NDArray predicted = out.singletonOrThrow().argMax(1);
            correct = (int) predicted.eq(truth.toType(predicted.getDataType(), false))
                    .toType(ai.djl.ndarray.types.DataType.INT64, false).sum().getLong();
            return loss.getFloat();
        }
    }

    @Override
    public void startStep() {
        buffers.startAverage();
    }

    @Override
    public void endStep(boolean failed) {
        if (failed) {
            buffers.dropAverage();
        } else {
            buffers.awaitAverage();
        }
    }

    @Override
    public void register(ElasticState state) {
        buffers.register(state);
    }

    @Override
    public float[] bufferValues() {
        return buffers.values();
    }

    @Override
    public void close() {
        trainer.close();
        model.close();
    }
}
