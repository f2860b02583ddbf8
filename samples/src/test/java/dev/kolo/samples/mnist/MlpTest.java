package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.train.Parameter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MlpTest {

    @Test
    void backwardMatchesFiniteDifferences() {
        int n = 4;
        Mlp model = new Mlp(new int[] {7, 6, 5, 3}, n, 11);
        Random random = new Random(3);
        float[] x = new float[n * 7];
        for (int i = 0; i < x.length; i++) {
            x[i] = random.nextFloat() < 0.2 ? 0f : random.nextFloat(); // some zero inputs, as background pixels
        }
        int[] y = {0, 2, 1, 2};
        // Biases away from zero so no ReLU sits on its kink under the perturbation.
        for (Parameter p : model.parameters()) {
            if (p.name().endsWith("bias")) {
                for (int i = 0; i < p.size(); i++) {
                    p.values()[i] = 0.3f * (i % 2 == 0 ? 1 : -1);
                }
            }
        }
        model.forward(x, y, n);
        List<String> order = new ArrayList<>();
        model.backward(p -> order.add(p.name()));
        assertEquals(List.of("fc3.bias", "fc3.weight", "fc2.bias", "fc2.weight", "fc1.bias", "fc1.weight"), order,
                "gradients are reported last layer first");
        double eps = 1e-3;
        int checked = 0;
        for (Parameter p : model.parameters()) {
            float[] analytic = p.gradient().clone();
            for (int i = 0; i < p.size(); i++) {
                float keep = p.values()[i];
                p.values()[i] = (float) (keep + eps);
                double up = model.forward(x, y, n);
                p.values()[i] = (float) (keep - eps);
                double down = model.forward(x, y, n);
                p.values()[i] = keep;
                double numeric = (up - down) / (2 * eps);
                assertEquals(numeric, analytic[i], 2e-3 + 0.02 * Math.abs(numeric), p.name() + "[" + i + "]");
                checked++;
            }
        }
        assertEquals(7 * 6 + 6 + 6 * 5 + 5 + 5 * 3 + 3, checked);
    }

    @Test
    void countsCorrectPredictions() {
        Mlp model = new Mlp(new int[] {2, 2}, 2, 1);
        Parameter w = model.parameters().get(0);
        System.arraycopy(new float[] {1, 0, 0, 1}, 0, w.values(), 0, 4); // identity: class = larger input
        float[] x = {3, 1, 0, 2};
        model.forward(x, new int[] {0, 0}, 2);
        assertEquals(1, model.correct());
        double loss = model.forward(x, new int[] {0, 1}, 2);
        assertEquals(2, model.correct());
        assertTrue(loss > 0 && loss < Math.log(2), "confident and right: loss below chance " + loss);
    }
}
