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

/** A rank that never submits a tensor: the others' op fails naming it (stall shutdown) instead of waiting forever. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StallInspectorTest {

    @Test
    void stalledTensorFailsOnTheRanksThatWaitAndNamesTheMissingRank() throws Exception {
        String job = LocalJob.uniqueName("stall");
        try (LocalJob three = LocalJob.start(job, 3, i -> LocalJob.config(job, 3)
                .stallWarning(Duration.ofSeconds(1)).stallShutdown(Duration.ofSeconds(2)).build())) {
            Kolo[] byRank = new Kolo[3];
            three.workers.forEach(k -> byRank[k.rank()] = k);
            CompletableFuture<Tensor> r0 = byRank[0].allreduceAsync("only-some", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            CompletableFuture<Tensor> r2 = byRank[2].allreduceAsync("only-some", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            for (CompletableFuture<Tensor> f : List.of(r0, r2)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof KoloException);
                assertTrue(e.getCause().getMessage().contains("ranks [1] did not submit it"), e.getCause().getMessage());
            }
            // The job goes on.
            List<Tensor> next = CollectiveMatrixTest.onAll(List.of(byRank),
                    (r, k) -> k.allreduce("after-stall", Tensor.of(new float[] {2}, 1), ReduceOp.SUM));
            assertEquals(6f, next.get(0).toFloatArray()[0]);
            // A name still in flight on this rank is refused at once.
            CompletableFuture<Tensor> pending = byRank[0].allreduceAsync("pending", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                    () -> byRank[0].allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
            assertTrue(dup.getMessage().contains("already in flight"));
            byRank[1].allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM);
            byRank[2].allreduceAsync("pending", Tensor.of(new float[] {1}, 1), ReduceOp.SUM);
            assertEquals(3f, pending.get(20, TimeUnit.SECONDS).toFloatArray()[0]);
        }
    }
}
