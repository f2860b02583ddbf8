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
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import java.nio.FloatBuffer;
import java.util.Locale;

/**
 * The baseline of the cnn's overhead measurement: the same network, data, batch size and SGD in DJL's own loop
 * ({@code Trainer.step()}), without Kolo, in one process with one intra-op thread. Prints images per second
 * over the steps after a warm-up, as the sample's progress lines do.
 *
 * <pre>
 * java -cp samples/target/worker.jar:samples/target/test-classes dev.kolo.samples.mnist.PlainDjlCnn STEPS BATCH
 * </pre>
 */
public final class PlainDjlCnn {
    private PlainDjlCnn() {
    }

    public static void main(String[] args) throws Exception {
        int steps = Integer.parseInt(args[0]);
        int batch = Integer.parseInt(args[1]);
        int warmup = Math.min(20, steps / 5);
        System.setProperty(DjlModel.THREADS_PROPERTY, "1");
        System.setProperty(DjlModel.INTEROP_THREADS_PROPERTY, "1");
        System.setProperty("ai.djl.offline", "true");
        ImageSet train = FashionMnist.load(FashionMnist.DEBIAN_DIR).train();
        int[] order = new int[train.count()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Random random = new java.util.Random(42);
        for (int i = order.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        float[] x = new float[batch * train.pixels()];
        int[] y = new int[batch];
        float[] labels = new float[batch];
        Engine.getEngine("PyTorch").setRandomSeed(42);
        try (Model model = Model.newInstance("plain-cnn", "PyTorch")) {
            model.setBlock(DjlNetworks.cnn());
            Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.05f)).optMomentum(0.9f).build();
            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(sgd))) {
                trainer.initialize(new Shape(1, 1, DjlModel.SIDE, DjlModel.SIDE));
                long start = 0;
                for (int step = 0; step < steps; step++) {
                    if (step == warmup) {
                        start = System.nanoTime();
                    }
                    train.fill(order, (int) ((long) step * batch % (train.count() - batch)), batch, x, y);
                    for (int i = 0; i < batch; i++) {
                        labels[i] = y[i];
                    }
                    try (NDManager m = trainer.getManager().newSubManager()) {
                        NDArray images = m.create(FloatBuffer.wrap(x), new Shape(batch, 1, DjlModel.SIDE, DjlModel.SIDE));
                        NDArray truth = m.create(FloatBuffer.wrap(labels), new Shape(batch));
                        try (GradientCollector gc = trainer.newGradientCollector()) {
                            gc.backward(trainer.getLoss().evaluate(new NDList(truth),
                                    trainer.forward(new NDList(images))));
                        }
                        trainer.step();
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "plain djl: %d steps of %d after %d of warm-up: %.1f s, samples/s %.0f%n",
                        steps - warmup, batch, warmup, seconds, (steps - warmup) * (double) batch / seconds);
            }
        }
    }
}
