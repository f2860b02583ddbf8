package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process set of an elastic job when a member is lost: the set's pending op fails (it does not hang), the
 * survivors regroup, the old set refuses every call naming the regroup and the fix, and a set created anew in
 * the new generation works.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ProcessSetRegroupTest {

    @Test
    void aLostMemberFailsTheSetsOpAndTheSetIsInvalidAfterTheRegroup() throws Exception {
        String job = LocalJob.uniqueName("set-regroup");
        try (LocalJob three = LocalJob.start(job, 3, i -> LocalJob.config(job, 3).minNp(2).maxNp(3)
                .set(Settings.ELASTIC_TIMEOUT, Duration.ofSeconds(30)).build())) {
            List<Kolo> ranks = three.byRank();
            List<ProcessSet> sets = CollectiveMatrixTest.onAll(ranks, (r, k) -> k.processSet(1, 2));
            List<Tensor> before = CollectiveMatrixTest.onAll(ranks.subList(1, 3),
                    (sr, k) -> sets.get(k.rank()).allreduce("w", Tensor.of(new float[] {sr + 1}, 1), ReduceOp.SUM));
            assertArrayEquals(new float[] {3}, before.get(0).toFloatArray());

            // Rank 1 waits in the set for rank 2, which is lost.
            CompletableFuture<Tensor> waiting = sets.get(1).allreduceAsync("never", Tensor.of(new float[] {1}, 1),
                    ReduceOp.SUM);
            long generation = ranks.get(0).generation();
            ranks.get(2).clusterNode().hazelcast().getLifecycleService().terminate();
            WorkerLostException lost = assertThrows(WorkerLostException.class,
                    () -> ranks.get(1).await(waiting, "the set's op"));
            assertTrue(lost.getMessage() != null && !lost.getMessage().isEmpty());

            List<Kolo> survivors = ranks.subList(0, 2);
            CollectiveMatrixTest.onAll(survivors, (r, k) -> {
                k.rejoin();
                return null;
            });
            survivors.forEach(k -> assertTrue(k.generation() > generation));
            for (Kolo k : survivors) {
                KoloException stale = assertThrows(KoloException.class, () -> sets.get(k.rank())
                        .allreduce("after", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
                assertTrue(stale.getMessage().contains("belonged to generation " + generation)
                        && stale.getMessage().contains("create it again with processSet(...)"), stale.getMessage());
            }

            List<Kolo> now = new ArrayList<>(survivors);
            now.sort(java.util.Comparator.comparingInt(Kolo::rank));
            List<ProcessSet> anew = CollectiveMatrixTest.onAll(now, (r, k) -> k.processSet(1, 0));
            assertEquals(1, anew.get(0).id(), "sets are numbered anew in every generation");
            List<Tensor> after = CollectiveMatrixTest.onAll(now,
                    (r, k) -> anew.get(r).allreduce("w", Tensor.of(new float[] {10 * (r + 1)}, 1), ReduceOp.SUM));
            assertArrayEquals(new float[] {30}, after.get(0).toFloatArray());
            assertArrayEquals(new float[] {30}, after.get(1).toFloatArray());
            CollectiveMatrixTest.onAll(now, (r, k) -> {
                anew.get(r).close();
                return null;
            });
        }
    }
}
