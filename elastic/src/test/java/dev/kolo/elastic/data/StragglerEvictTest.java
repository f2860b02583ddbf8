package dev.kolo.elastic.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.InProcessJob;
import dev.kolo.elastic.WorkerLeftException;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code KOLO_STRAGGLER=evict} on a real elastic job of three workers in this JVM (at least two), whose third worker
 * takes three times as long per sample as the others: after the first window it leaves at the commit, the other
 * two go on without a rollback and finish, and every step, before and after, takes its whole global batch once.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StragglerEvictTest {
    private static final int GLOBAL = 96;
    private static final int WINDOW = 5;
    private static final int STEPS = 6 * WINDOW;

    @Test
    void aRankFarSlowerThanTheOthersLeavesAtTheNextCommitAndTheJobGoesOnWithoutIt() throws Exception {
        Map<Long, List<int[]>> byStep = new ConcurrentHashMap<>();
        try (InProcessJob job = new InProcessJob(3, b -> b.set(Settings.MIN_NP, 2))) {
            List<String> ends = job.onAll(k -> {
                boolean slow = k.rank() == 2; // the worker stays slow whatever rank a new generation gives it
                ElasticState state = ElasticState.builder(k).replica(false).build();
                ElasticSampler sampler = ElasticSampler.builder(k).split(BatchSplit.global(GLOBAL)).shuffle(false)
                        .straggler(StragglerPolicy.EVICT).paceWindow(WINDOW).build().register(state);
                state.value("step", 0L);
                Tensor grad = Tensor.allocate(DType.FLOAT32, 256);
                try {
                    return Elastic.run(k, state, s -> {
                        Iterator<int[]> it = sampler.batches((long) GLOBAL * (STEPS + 1));
                        for (long step = s.longValue("step"); step < STEPS; ) {
                            int[] batch = it.next();
                            pause(batch.length * (slow ? 3 : 1) * 200_000L);
                            k.allreduceInPlace("evict.grad", grad, ReduceOp.SUM);
                            sampler.stepped();
                            byStep.computeIfAbsent(step, x -> new CopyOnWriteArrayList<>()).add(batch); // three threads add
                            step++;
                            s.set("step", step);
                            if (step % WINDOW == 0) {
                                s.commit();
                            }
                        }
                        return (slow ? "slow" : "fast") + " done at size " + k.size();
                    });
                } catch (WorkerLeftException e) {
                    return (slow ? "slow" : "fast") + " left at step " + state.longValue("step");
                }
            });
            assertEquals(List.of("fast done at size 2", "fast done at size 2", "slow left at step " + WINDOW),
                    ends.stream().sorted().toList(), "the slow worker leaves at the commit after the first window");
        }
        Map<Long, List<int[]>> steps = new TreeMap<>(byStep);
        assertEquals(STEPS, steps.size());
        steps.forEach((step, batches) -> {
            assertEquals(step < WINDOW ? 3 : 2, batches.size(), "ranks at step " + step);
            boolean[] seen = new boolean[GLOBAL];
            int taken = 0;
            for (int[] batch : batches) {
                for (int i : batch) {
                    int at = (int) (i - step * GLOBAL);
                    assertTrue(at >= 0 && at < GLOBAL && !seen[at], "step " + step + " takes sample " + i + " once");
                    seen[at] = true;
                    taken++;
                }
            }
            assertEquals(GLOBAL, taken, "step " + step + " takes its whole global batch");
        });
    }

    private static void pause(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
