package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rank that never submits a tensor: after the stall shutdown time every rank gets an error naming the tensor,
 * the missing ranks and the setting, instead of waiting for ever; the default is finite.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StallInspectorTest {

    @Test
    void theDefaultStallShutdownIsFiniteAndDocumented() throws Exception {
        java.time.Duration shutdown = KoloConfig.builder().build().get(Settings.STALL_SHUTDOWN);
        assertEquals(java.time.Duration.ofSeconds(600), shutdown, "documented default");
        assertTrue(shutdown.compareTo(KoloConfig.builder().build().get(Settings.OP_TIMEOUT)) < 0,
                "a stall must end before a blocking call's own deadline");
        assertTrue(dev.kolo.testing.DocumentedSettings.table()
                        .matches("(?s).*\\| `KOLO_STALL_SHUTDOWN` \\|[^\\n]*\\| 600 s \\|.*"),
                "the documented settings table gives the default of KOLO_STALL_SHUTDOWN");
    }

    @Test
    void stalledTensorFailsOnTheRanksThatWaitAndNamesTheMissingRank() throws Exception {
        String job = LocalJob.uniqueName("stall");
        try (LocalJob three = LocalJob.start(job, 3, i -> LocalJob.config(job, 3)
                .set(Settings.STALL_WARNING, Duration.ofSeconds(1)).set(Settings.STALL_SHUTDOWN, Duration.ofSeconds(2)).build())) {
            List<Kolo> byRank = three.byRank();
            CompletableFuture<Tensor> r0 = byRank.get(0).allreduceAsync("only-some", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            CompletableFuture<Tensor> r2 = byRank.get(2).allreduceAsync("only-some", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            // Rank 1 runs another step meanwhile: it waits for a tensor the others never submit.
            CompletableFuture<Tensor> r1 = byRank.get(1).allreduceAsync("elsewhere", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            for (CompletableFuture<Tensor> f : List.of(r0, r2)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof KoloException);
                assertTrue(e.getCause().getMessage().contains("ranks [1] did not submit it"), e.getCause().getMessage());
                assertTrue(e.getCause().getMessage().contains("raise KOLO_STALL_SHUTDOWN"), e.getCause().getMessage());
            }
            ExecutionException own = assertThrows(ExecutionException.class, () -> r1.get(20, TimeUnit.SECONDS));
            assertTrue(own.getCause().getMessage().contains("'elsewhere' stalled: ranks [0, 2] did not submit it"),
                    own.getCause().getMessage());
            // Rank 1 submits the stalled tensor late: it fails at once with the same error, instead of stalling anew.
            ExecutionException late = assertThrows(ExecutionException.class, () -> byRank.get(1).allreduceAsync("only-some",
                    Tensor.of(new float[] {1}, 1), ReduceOp.SUM).get(5, TimeUnit.SECONDS));
            assertTrue(late.getCause().getMessage().contains("'only-some' stalled: ranks [1] did not submit it"),
                    late.getCause().getMessage());
            // The job goes on.
            List<Tensor> next = CollectiveMatrixTest.onAll(byRank,
                    (r, k) -> k.allreduce("after-stall", Tensor.of(new float[] {2}, 1), ReduceOp.SUM));
            assertEquals(6f, next.get(0).toFloatArray()[0]);
            // A name still in flight on this rank is refused at once.
            CompletableFuture<Tensor> pending = byRank.get(0).allreduceAsync("pending", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                    () -> byRank.get(0).allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
            assertTrue(dup.getMessage().contains("already in flight"));
            byRank.get(1).allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM);
            byRank.get(2).allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM);
            assertEquals(3f, pending.get(20, TimeUnit.SECONDS).toFloatArray()[0]);
        }
    }
}
