package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.GradientCollector;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * On the PyTorch engine a CPU array's byte buffer is a view of the array's own memory, for values and
 * gradients: Kolo reads and writes them in place (one copy each way, no allocation), and clears gradients.
 */
class EngineArraysTest {
    @BeforeAll
    static void offline() {
        System.setProperty("ai.djl.offline", "true");
    }

    @Test
    void valuesAndGradientsAreSharedAndMoveBothWays() {
        try (NDManager manager = Engine.getEngine("PyTorch").newBaseManager()) {
            NDArray w = manager.create(new float[] {1, 2, 3, 4});
            w.setRequiresGradient(true);
            assertTrue(EngineArrays.shared(w), "values: a view of the tensor");
            try (GradientCollector gc = Engine.getEngine("PyTorch").newGradientCollector()) {
                gc.backward(w.mul(w).sum()); // gradient 2w
            }
            assertTrue(EngineArrays.shared(w.getGradient()), "gradient: a view of the tensor");
            EngineArrays arrays = new EngineArrays();
            float[] gradient = new float[4];
            arrays.takeGradient(w, gradient);
            assertArrayEquals(new float[] {2, 4, 6, 8}, gradient);
            assertArrayEquals(new float[] {0, 0, 0, 0}, w.getGradient().toFloatArray(), "cleared in the engine");
            arrays.writeValues(w, new float[] {5, 6, 7, 8});
            assertArrayEquals(new float[] {5, 6, 7, 8}, w.toFloatArray(), "written into the engine's array");
            float[] back = new float[4];
            arrays.readValues(w, back);
            assertArrayEquals(new float[] {5, 6, 7, 8}, back);
        }
    }
}
