package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The optimizer's wait for the averaged gradients has the deadline of Kolo's blocking collectives: a step whose
 * peer never steps fails after {@code KOLO_OP_TIMEOUT}, naming the gradient and the setting, instead of
 * waiting for ever.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DistributedOptimizerTimeoutTest {
    private static final Duration OP_TIMEOUT = Duration.ofSeconds(2);

    @Test
    void aStepWhosePeerNeverStepsFailsAfterTheOpTimeout() throws Exception {
        List<Kolo> workers = formJob(2);
        ExecutorService training = Executors.newSingleThreadExecutor();
        try {
            Kolo rank0 = workers.get(0).rank() == 0 ? workers.get(0) : workers.get(1);
            Parameter w = Parameter.of("w", new float[] {1, 2}, new float[] {3, 4});
            DistributedOptimizer opt = DistributedOptimizer.builder(rank0, List.of(w)).build();
            long start = System.nanoTime();
            // Rank 1 never steps: rank 0's step waits for a gradient its peer never sends.
            CompletableFuture<Boolean> step = CompletableFuture.supplyAsync(() -> opt.step(0.1), training);
            ExecutionException e = assertThrows(ExecutionException.class, () -> step.get(20, TimeUnit.SECONDS),
                    "the step did not end by its op timeout");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertInstanceOf(KoloException.class, e.getCause());
            String message = e.getCause().getMessage();
            assertTrue(message.contains("KOLO_OP_TIMEOUT") && message.contains("'grad.w'"), message);
            assertTrue(tookMs >= OP_TIMEOUT.toMillis() - 50 && tookMs < OP_TIMEOUT.toMillis() + 5000,
                    "failed after " + tookMs + " ms with an op timeout of " + OP_TIMEOUT.toMillis() + " ms");
        } finally {
            training.shutdownNow();
            workers.parallelStream().forEach(Kolo::close);
        }
    }

    private static List<Kolo> formJob(int np) throws Exception {
        String job = "train-timeout-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 12000 + 20 * (500 + new Random().nextInt(400));
        ExecutorService pool = Executors.newFixedThreadPool(np);
        try {
            List<Future<Kolo>> f = new ArrayList<>();
            for (int i = 0; i < np; i++) {
                KoloConfig c = KoloConfig.builder().jobName(job).np(np).metricsPort(0).clusterPort(port)
                        .rendezvousTimeout(Duration.ofSeconds(60)).opTimeout(OP_TIMEOUT).build();
                f.add(pool.submit(() -> Kolo.init(c)));
            }
            List<Kolo> workers = new ArrayList<>();
            for (Future<Kolo> k : f) {
                workers.add(k.get(70, TimeUnit.SECONDS));
            }
            return workers;
        } finally {
            pool.shutdownNow();
        }
    }
}
