package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** Real Hazelcast members in one JVM: ranks, coordinator and generation agreement, barriers. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterFormationTest {
    private LocalJob four;

    @BeforeAll
    void formFour() {
        four = LocalJob.start(4);
    }

    @AfterAll
    void close() {
        if (four != null) {
            four.close();
        }
    }

    @Test
    void singleWorkerIsRankZeroOfOne() {
        try (LocalJob one = LocalJob.start(1)) {
            Kolo k = one.workers.get(0);
            assertEquals(0, k.rank());
            assertEquals(1, k.size());
            assertEquals(1, k.generation());
            assertEquals(0, k.coordinatorRank());
            k.barrier(); // a ring of one passes its barrier alone
        }
    }

    @Test
    void threeWorkersGetContiguousRanksAndAgree() {
        try (LocalJob three = LocalJob.start(3)) {
            assertAgreement(three.workers, 3);
        }
    }

    @Test
    void fourWorkersGetContiguousRanksAndAgree() {
        assertAgreement(four.workers, 4);
    }

    @Test
    void localRanksCountWorkersOnTheSameHost() {
        // All four share 127.0.0.1: local rank equals rank, local size equals size.
        for (Kolo k : four.workers) {
            assertEquals(k.rank(), k.localRank());
            assertEquals(4, k.localSize());
        }
    }

    @Test
    void barrierWaitsForTheSlowestRank() throws Exception {
        long slowMillis = 700;
        List<Long> returnedAt = four.onAll(k -> {
            if (k.rank() == 2) {
                sleep(slowMillis);
            }
            long start = System.nanoTime();
            k.barrier();
            return System.nanoTime() - start;
        });
        for (int i = 0; i < returnedAt.size(); i++) {
            int rank = four.workers.get(i).rank();
            if (rank != 2) {
                assertTrue(returnedAt.get(i) >= TimeUnit.MILLISECONDS.toNanos(slowMillis - 100),
                        "rank " + rank + " left the barrier after " + returnedAt.get(i) / 1_000_000
                                + " ms, before the slow rank arrived");
            }
        }
        // Consecutive barriers keep working.
        four.onAll(k -> {
            k.barrier();
            k.barrier();
            return null;
        });
    }

    @Test
    void rankHintsWinOverJoinOrder() {
        String job = LocalJob.uniqueName("hints");
        try (LocalJob hinted = LocalJob.start(job, 3, i -> LocalJob.config(job, 3).set(Settings.RANK_HINT, 10 * (3 - i)).build())) {
            // Hints 30, 20, 10: ranks follow the hints, compacted to 0..2.
            for (int i = 0; i < 3; i++) {
                assertEquals(2 - i, hinted.workers.get(i).rank());
            }
        }
    }

    private static void assertAgreement(List<Kolo> workers, int n) {
        Set<Integer> ranks = workers.stream().map(Kolo::rank).collect(Collectors.toSet());
        assertEquals(Set.of(java.util.stream.IntStream.range(0, n).boxed().toArray(Integer[]::new)), ranks);
        Set<Long> generations = new HashSet<>();
        Set<String> coordinators = new HashSet<>();
        for (Kolo k : workers) {
            assertEquals(n, k.size());
            generations.add(k.generation());
            coordinators.add(k.coordinatorNode());
        }
        assertEquals(1, generations.size(), "generations differ: " + generations);
        assertEquals(1, coordinators.size(), "coordinators differ: " + coordinators);
        // The coordinator is one of the job's own workers.
        String coordinator = coordinators.iterator().next();
        assertTrue(workers.stream().anyMatch(k -> k.nodeId().equals(coordinator)));
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
