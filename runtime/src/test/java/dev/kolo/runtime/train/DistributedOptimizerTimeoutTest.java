package dev.kolo.runtime.train;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
        InJvmJob job = InJvmJob.form("train-timeout", 2, b -> b.set(Settings.OP_TIMEOUT, OP_TIMEOUT));
        List<Kolo> workers = job.workers;
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
            job.close();
        }
    }
}
