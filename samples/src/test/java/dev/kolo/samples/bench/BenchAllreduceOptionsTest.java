package dev.kolo.samples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The fused step's switch reads as it is spelled, and its gradients tile the single allreduce's buffer; the warm-up
 * before each size has its bounds; hosts divide the ranks and a link rate needs hosts.
 */
class BenchAllreduceOptionsTest {
    private static BenchAllreduceCommand parse(String... args) {
        BenchAllreduceCommand c = new BenchAllreduceCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void theFusedStepIsOnByDefaultAndOffWithItsNegation() {
        assertTrue(parse("-np", "2").fusedStep);
        assertTrue(parse("-np", "2", "--fused-step").fusedStep);
        assertFalse(parse("-np", "2", "--no-fused-step").fusedStep);
    }

    @Test
    void theStepsGradientsTileTheSingleAllreducesBufferInOrder() {
        java.util.List<long[]> shapes = ResNet50Shapes.backwardOrder();
        long total = 0;
        for (long[] shape : shapes) {
            total += ResNet50Shapes.elements(shape);
        }
        dev.kolo.runtime.Tensor whole = dev.kolo.runtime.Tensor.allocate(dev.kolo.runtime.DType.FLOAT32, total);
        for (int i = 0; i < total; i++) {
            whole.data().putInt(4 * i, i); // each element's index, exact at every size
        }
        java.util.List<dev.kolo.runtime.Tensor> views = FusedStep.gradientViews(whole, shapes);
        assertEquals(shapes.size(), views.size());
        long next = 0; // the element of the whole each view must start at: no gap, no overlap
        for (int g = 0; g < views.size(); g++) {
            dev.kolo.runtime.Tensor v = views.get(g);
            assertTrue(java.util.Arrays.equals(shapes.get(g), v.shape()), "shape of gradient " + g);
            int elements = v.data().capacity() / 4;
            assertEquals(ResNet50Shapes.elements(shapes.get(g)), elements, "elements of gradient " + g);
            for (int e = 0; e < elements; e++) {
                assertEquals(next + e, v.data().getInt(4 * e), "gradient " + g + " element " + e);
            }
            next += elements;
        }
        assertEquals(total, next);
        views.get(3).data().putInt(0, -1); // a view writes through to the shared buffer
        assertEquals(-1, whole.data().getInt(4 * (int) (ResNet50Shapes.elements(shapes.get(0))
                + ResNet50Shapes.elements(shapes.get(1)) + ResNet50Shapes.elements(shapes.get(2)))));
    }

    @Test
    void hostsMustDivideTheRanksAndALinkRateNeedsHosts() {
        IllegalArgumentException odd = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> parse("-np", "3", "--hosts", "2").call());
        assertTrue(odd.getMessage().contains("--hosts must divide -np"), odd.getMessage());
        IllegalArgumentException rate = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> parse("-np", "2", "--link-rate", "10gbit").call());
        assertTrue(rate.getMessage().contains("--hosts 2 or more"), rate.getMessage());
        assertEquals(1, parse("-np", "2").hosts);
    }

    @Test
    void everySizeWarmsUpForATenthOfTheBudgetWithinItsBounds() {
        // 1 s budget: 40 us ops would fit 25000; a tenth is capped at 100.
        assertEquals(100, BenchAllreduceCommand.warmUpIterations(1.0, 40e-6));
        // 2 ms ops: a tenth of the budget is 50 ops.
        assertEquals(50, BenchAllreduceCommand.warmUpIterations(1.0, 2e-3));
        // 20 ms ops: a tenth is 5, the floor of 20 holds (0.4 s).
        assertEquals(20, BenchAllreduceCommand.warmUpIterations(1.0, 20e-3));
        // 200 ms ops: 20 would be 4 budgets; as many as fit in one.
        assertEquals(5, BenchAllreduceCommand.warmUpIterations(1.0, 0.2));
        // Slower than the budget: still 2.
        assertEquals(2, BenchAllreduceCommand.warmUpIterations(1.0, 3.0));
    }

    @Test
    void smallOpsWarmUpUntilTheJitCompilesThemWithinTwoSeconds() {
        // 10 us ops: all 20,000 (19,000 after the first 1,000), 0.2 s.
        assertEquals(19_000, BenchAllreduceCommand.smallWarmUpOps(10e-6));
        // 300 us ops (np 8 on 2 cores): as many as fit in 2 s.
        assertEquals(6_666, BenchAllreduceCommand.smallWarmUpOps(300e-6));
        // Slower than the bound: none more.
        assertEquals(0, BenchAllreduceCommand.smallWarmUpOps(3.0));
    }
}
