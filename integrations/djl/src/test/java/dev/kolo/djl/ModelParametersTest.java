package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ModelParameters} (under {@link DistributedTrainer}) trains the parameters that required a gradient when
 * it was built, never BatchNorm's running statistics (those are {@link ModelBuffers}'), and refuses a step after
 * a parameter was frozen or unfrozen, naming it: its optimizer keeps state for a fixed set.
 */
class ModelParametersTest {
    @BeforeAll
    static void offline() {
        System.setProperty("ai.djl.offline", "true");
    }

    @Test
    void trainsWhatRequiredAGradientAndRefusesAChangeOfIt() {
        System.setProperty("kolo.test.network", "batchnorm");
        try (Model model = Model.newInstance("parameters")) {
            SequentialBlock net = DjlWorker.network();
            model.setBlock(net);
            Block conv = net.getChildren().valueAt(FreezeWorker.CONV);
            Block last = net.getChildren().valueAt(FreezeWorker.LAST);
            conv.freezeParameters(true);
            try (Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss()))) {
                trainer.initialize(new Shape(1, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                ModelParameters parameters = ModelParameters.of(net);
                List<String> names = parameters.parameters().stream().map(p -> p.name()).toList();
                assertTrue(names.stream().noneMatch(n -> n.startsWith("01Conv2d")), "the frozen convolution: "
                        + names);
                assertTrue(names.stream().noneMatch(n -> n.contains("running")), "BatchNorm's statistics: " + names);
                assertEquals(6, names.size(), "BatchNorm's gamma and beta, both linear layers' weight and bias: "
                        + names);
                try (ai.djl.ndarray.NDManager batch = trainer.getManager().newSubManager();
                     ai.djl.training.GradientCollector gc = trainer.newGradientCollector()) {
                    ai.djl.ndarray.NDArray x = batch.create(DjlWorker.images(0, 0, 2),
                            new Shape(2, 1, DjlWorker.IMAGE, DjlWorker.IMAGE));
                    ai.djl.ndarray.NDArray y = batch.create(DjlWorker.labels(0, 0, 2));
                    gc.backward(trainer.getLoss().evaluate(new ai.djl.ndarray.NDList(y),
                            trainer.forward(new ai.djl.ndarray.NDList(x))));
                }
                parameters.takeGradients(p -> { });

                last.freezeParameters(true);
                IllegalStateException frozen = assertThrows(IllegalStateException.class,
                        () -> parameters.takeGradients(p -> { }));
                assertTrue(frozen.getMessage().contains("07Linear_weight' was frozen"), frozen.getMessage());
                last.freezeParameters(false);

                conv.freezeParameters(false);
                IllegalStateException unfrozen = assertThrows(IllegalStateException.class,
                        () -> parameters.takeGradients(p -> { }));
                assertTrue(unfrozen.getMessage().contains("01Conv2d_weight' was unfrozen"), unfrozen.getMessage());
            }
        } finally {
            System.clearProperty("kolo.test.network");
        }
    }
}
