package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.train.Adam;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.UpdateRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** An update rule's state registered through {@link ElasticState#updateRule}: committed and restored with weights. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OptimizerStateTest {
    @Test
    void adamsMomentsAndStepCountsComeBackWithARestore() throws Exception {
        List<Parameter> ps = List.of(
                Parameter.of("fc.w", new float[] {0.5f, -1f, 2f, 0.25f, -0.75f, 1.5f}, new float[6], 2, 3),
                Parameter.of("fc.b", new float[] {0.1f}, new float[1]));
        Adam adam = new Adam(0.01);
        try (InProcessJob job = new InProcessJob(1, b -> b)) {
            Kolo kolo = job.workers.get(0);
            try (ElasticState state = ElasticState.builder(kolo).build()) {
                state.parameters(ps).updateRule(adam, ps);
                Map<String, Object> live = liveState(adam, ps);
                assertEquals(List.of("fc.w.m", "fc.w.v", "fc.w.step", "fc.b.m", "fc.b.v", "fc.b.step"),
                        List.copyOf(live.keySet()));
                for (int step = 1; step <= 2; step++) {
                    step(adam, ps, step);
                }
                state.commit();
                Map<String, Object> committed = copies(live);
                List<float[]> committedWeights = weights(ps);
                step(adam, ps, 3);
                List<float[]> afterStep3 = weights(ps);
                step(adam, ps, 4);
                step(adam, ps, 5);
                assertArrayEquals(new long[] {5}, (long[]) live.get("fc.w.step"));
                assertFalse(java.util.Arrays.equals((float[]) committed.get("fc.w.m"), (float[]) live.get("fc.w.m")));

                state.restore();
                for (Map.Entry<String, Object> e : committed.entrySet()) {
                    Object now = live.get(e.getKey());
                    if (now instanceof float[] f) {
                        assertArrayEquals((float[]) e.getValue(), f, e.getKey());
                    } else {
                        assertArrayEquals((long[]) e.getValue(), (long[]) now, e.getKey());
                    }
                }
                assertArrayEquals(new long[] {2}, (long[]) live.get("fc.b.step"));
                for (int j = 0; j < ps.size(); j++) {
                    assertArrayEquals(committedWeights.get(j), ps.get(j).values(), ps.get(j).name());
                }
                step(adam, ps, 3);
                for (int j = 0; j < ps.size(); j++) {
                    assertArrayEquals(afterStep3.get(j), ps.get(j).values(), "the step after a restore is the same");
                }
            }
        }
    }

    private static void step(UpdateRule rule, List<Parameter> ps, int step) {
        for (Parameter p : ps) {
            float[] g = p.gradient();
            for (int i = 0; i < g.length; i++) {
                g[i] = (float) Math.sin(step * 7 + i * 3 + p.size());
            }
            rule.apply(p, 0.05);
        }
    }

    private static Map<String, Object> liveState(UpdateRule rule, List<Parameter> ps) {
        Map<String, Object> live = new LinkedHashMap<>();
        UpdateRule.StateSink sink = new UpdateRule.StateSink() {
            @Override
            public void floats(String name, float[] array, long[] shape) {
                live.put(name, array);
            }

            @Override
            public void longs(String name, long[] array, long[] shape) {
                live.put(name, array);
            }
        };
        ps.forEach(p -> rule.state(p, sink));
        return live;
    }

    private static Map<String, Object> copies(Map<String, Object> live) {
        Map<String, Object> copy = new LinkedHashMap<>();
        live.forEach((name, a) -> copy.put(name, a instanceof float[] f ? f.clone() : ((long[]) a).clone()));
        return copy;
    }

    private static List<float[]> weights(List<Parameter> ps) {
        List<float[]> w = new ArrayList<>();
        ps.forEach(p -> w.add(p.values().clone()));
        return w;
    }
}
