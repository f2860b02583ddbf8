package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A generation that ends while a tensor waits in its agreement rounds: the worker left behind is idle, not
 * woken again and again by the dead generation's deadlines (its waiting tensor's demotion time, which passes
 * after the abort).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbortedGenerationIdleTest {
    /** A tenth of the stall warning: how long a cached tensor waits in rounds before it goes to the coordinator. */
    private static final Duration STALL_WARNING = Duration.ofSeconds(5);
    private static final long DEMOTE_NANOS = STALL_WARNING.toNanos() / 10;

    @Test
    void aWorkerWhosePeerDiedWithATensorWaitingStaysIdle() throws Exception {
        String name = LocalJob.uniqueName("abort-idle");
        try (LocalJob job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).set(Settings.STALL_WARNING, STALL_WARNING)
                .build())) {
            List<Kolo> byRank = job.byRank();
            for (int i = 0; i < 2; i++) { // the first negotiates "w", the second agrees on it in a round
                job.onAll(k -> k.allreduce("w", one(), ReduceOp.SUM));
            }
            ProcessCpu.awaitQuiet(0.05, Duration.ofSeconds(30));

            // Rank 0 alone submits the cached tensor: it waits in the agreement rounds for rank 1.
            Counter hits = byRank.get(0).meterRegistry().get("kolo.cache.hits").counter();
            double before = hits.count();
            long submitted = System.nanoTime();
            CompletableFuture<Tensor> orphan = byRank.get(0).allreduceAsync("w", one(), ReduceOp.SUM);
            awaitCondition(() -> hits.count() > before, "rank 0 never admitted 'w' into its rounds");
            assertTrue(System.nanoTime() - submitted < DEMOTE_NANOS / 2, "too slow to test: 'w' is about to be "
                    + "sent to the coordinator, and the generation must end while it waits in rounds");

            // Rank 1 dies: its connections close at once, and rank 0's generation ends with 'w' still waiting.
            byRank.get(1).close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> orphan.get(20, TimeUnit.SECONDS));
            assertInstanceOf(KoloException.class, e.getCause());

            // Past the waiting tensor's demotion time (the dead generation's deadline), the worker must be idle.
            awaitCondition(() -> System.nanoTime() - submitted > 2 * DEMOTE_NANOS, "the clock stopped");
            // Leaving the cluster keeps Hazelcast busy for a few seconds: the first quiet 2 s window passes.
            ProcessCpu.Sample idle = ProcessCpu.firstQuietWindow(Duration.ofSeconds(2), 0.05, Duration.ofSeconds(30));
            assertTrue(idle.share() < 0.05, "after its generation ended the worker never became idle: " + idle);
        }
    }

    private static void awaitCondition(java.util.function.BooleanSupplier condition, String failure)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, failure);
            Thread.sleep(1); // polling a condition, bounded by the deadline
        }
    }

    private static Tensor one() {
        return Tensor.of(new float[] {1}, 1);
    }
}
