package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The coordinator's member dies abruptly while the other ranks wait at it in a barrier: the rest agree on one
 * new coordinator, and every survivor's barrier ends with {@link WorkerLostException} instead of waiting for
 * ever (docs/dev/design/failure-model.md). How fast failover is belongs to benchmarks; this checks what it does.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CoordinatorFailoverTest {

    @Test
    void survivorsAgreeOnNewCoordinatorAndPendingBarrierFails() throws Exception {
        String name = LocalJob.uniqueName("failover");
        // A short stall warning makes the coordinator say, in a log line, which barrier it holds and which ranks
        // it still lacks: the sign that the survivors' barriers really are pending at it.
        try (LogCapture log = LogCapture.start();
             LocalJob job = LocalJob.start(name, 4,
                     i -> LocalJob.config(name, 4).set(Settings.STALL_WARNING, Duration.ofSeconds(1)).build())) {
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
            // Every survivor's request has reached the coordinator once it reports the barrier waiting for the
            // coordinator's own rank alone.
            String stall = log.await(l -> l.contains("stall: tensor 'kolo.barrier'")
                    && l.contains("for ranks [" + coordinatorRank + "] to submit it"), 30);
            assertTrue(coordinator.meterRegistry().counter("kolo.stall.warnings").count() > 0, stall);
            barriers.forEach(b -> assertTrue(!b.isDone(), "a barrier ended before the coordinator's rank joined"));

            coordinator.clusterNode().hazelcast().getLifecycleService().terminate(); // abrupt, no goodbye

            // The survivors agree on one new coordinator, one of themselves, for the next generation.
            String newCoordinator = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (newCoordinator == null && System.nanoTime() < deadline) {
                List<String> seen = survivors.stream().map(Kolo::coordinatorNode).distinct().toList();
                if (seen.size() == 1 && !seen.get(0).equals(coordinator.nodeId())
                        && survivors.stream().allMatch(k -> k.coordinatorGeneration() == k.generation() + 1)) {
                    newCoordinator = seen.get(0);
                }
                Thread.sleep(50); // poll interval; the deadline bounds the wait
            }
            if (newCoordinator == null) {
                fail("survivors did not agree on a new coordinator within 30 s");
            }
            String chosen = newCoordinator;
            assertTrue(survivors.stream().anyMatch(k -> k.nodeId().equals(chosen)));
            assertNotEquals(coordinator.nodeId(), chosen);

            // Every pending barrier ends, with WorkerLostException (the generation is aborted).
            for (CompletableFuture<Void> b : barriers) {
                try {
                    b.get(30, TimeUnit.SECONDS);
                    fail("barrier completed although the coordinator died");
                } catch (ExecutionException e) {
                    assertInstanceOf(WorkerLostException.class, e.getCause(), String.valueOf(e.getCause()));
                }
            }
            // A new barrier on the aborted generation fails instead of hanging, and once membership has reported
            // the loss it names the lost rank (a survivor's data plane may have seen a neighbour close its
            // connections first, which names that neighbour).
            for (Kolo k : survivors) {
                WorkerLostException last = LocalJob.lastLossError(k, e -> e.lostRank() == coordinatorRank);
                assertEquals(coordinatorRank, last.lostRank(), last.getMessage());
            }
        }
    }
}
