package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The coordinator's member dies abruptly: the rest agree on one new coordinator and fail pending work. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CoordinatorFailoverTest {

    @Test
    void survivorsAgreeOnNewCoordinatorAndPendingBarrierFails() throws Exception {
        try (LocalJob job = LocalJob.start(4)) {
            Kolo coordinator = job.workers.stream()
                    .filter(k -> k.nodeId().equals(k.coordinatorNode())).findFirst().orElseThrow();
            int coordinatorRank = coordinator.rank();
            List<Kolo> survivors = new ArrayList<>(job.workers);
            survivors.remove(coordinator);

            // Survivors wait in a barrier the coordinator will never reach.
            List<CompletableFuture<Void>> barriers = new ArrayList<>();
            for (Kolo k : survivors) {
                barriers.add(CompletableFuture.runAsync(k::barrier));
            }
            Thread.sleep(200);
            long killedAt = System.nanoTime();
            coordinator.clusterNode().hazelcast().getLifecycleService().terminate(); // abrupt, no goodbye

            String newCoordinator = null;
            while (System.nanoTime() - killedAt < TimeUnit.SECONDS.toNanos(10)) {
                List<String> seen = survivors.stream().map(Kolo::coordinatorNode).distinct().toList();
                if (seen.size() == 1 && !seen.get(0).equals(coordinator.nodeId())
                        && survivors.stream().allMatch(k -> k.coordinatorGeneration() == k.generation() + 1)) {
                    newCoordinator = seen.get(0);
                    break;
                }
                Thread.sleep(50);
            }
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            if (newCoordinator == null) {
                fail("survivors did not agree on a new coordinator within 10 s");
            }
            String chosen = newCoordinator;
            assertTrue(survivors.stream().anyMatch(k -> k.nodeId().equals(chosen)));
            assertNotEquals(coordinator.nodeId(), chosen);
            System.out.println("new coordinator agreed after " + tookMillis + " ms");

            for (CompletableFuture<Void> b : barriers) {
                try {
                    b.get(10, TimeUnit.SECONDS);
                    fail("barrier completed although the coordinator died");
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof WorkerLostException, String.valueOf(e.getCause()));
                }
            }
            // A new barrier on the aborted generation fails at once instead of hanging, and once membership has
            // reported the loss it names the lost rank (a survivor's data plane may have seen a neighbour close
            // its connections first, which names that neighbour).
            for (Kolo k : survivors) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                WorkerLostException last = null;
                while (System.nanoTime() < deadline) {
                    long start = System.nanoTime();
                    try {
                        k.barrier();
                        fail("barrier on an aborted generation succeeded");
                    } catch (WorkerLostException expected) {
                        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "it failed at once");
                        last = expected;
                    }
                    if (last.lostRank() == coordinatorRank) {
                        break;
                    }
                    Thread.onSpinWait();
                }
                assertEquals(coordinatorRank, last.lostRank(), last.getMessage());
            }
        }
    }
}
