package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Regrouping of an elastic job: after a loss, with a newcomer, and the majority rule. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ElasticRendezvousTest {

    private static KoloConfig.Builder elastic(String job, int np) {
        return LocalJob.config(job, np).minNp(2).maxNp(5).set(Settings.ELASTIC_TIMEOUT, Duration.ofSeconds(30));
    }

    private static List<Kolo> byRank(List<Kolo> ks) {
        List<Kolo> sorted = new ArrayList<>(ks);
        sorted.sort(Comparator.comparingInt(Kolo::rank));
        return sorted;
    }

    private static float sumOfRanksPlusOne(List<Kolo> ranks) throws Exception {
        List<Tensor> out = CollectiveMatrixTest.onAll(ranks, (r, k) -> k.allreduce("check",
                Tensor.of(new float[] {r + 1f}, 1), ReduceOp.SUM));
        CollectiveMatrixTest.assertSameBytes(out);
        return out.get(0).toFloatArray()[0];
    }

    @Test
    void survivorsRegroupThenANewcomerIsAdmittedAtAnAgreedBoundary() throws Exception {
        String job = LocalJob.uniqueName("elastic");
        LocalJob four = LocalJob.start(job, 4, i -> elastic(job, 4).build());
        List<Kolo> live = new ArrayList<>(four.workers);
        Kolo newcomer = null;
        try {
            long firstGeneration = live.get(0).generation();
            assertEquals(10f, sumOfRanksPlusOne(byRank(live)));
            Kolo victim = byRank(live).get(2);
            live.remove(victim);
            victim.clusterNode().hazelcast().getLifecycleService().terminate();
            long lostAt = System.nanoTime();
            // Every survivor sees the loss (in an op or at once), then regroups.
            List<Long> generations = CollectiveMatrixTest.onAll(live, (r, k) -> {
                try {
                    k.allreduce("during-loss", Tensor.of(new float[] {1f}, 1), ReduceOp.SUM);
                } catch (WorkerLostException expected) {
                    // the ring of the old generation is gone
                }
                k.rejoin();
                return k.generation();
            });
            long regroupMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAt);
            assertEquals(1, Set.copyOf(generations).size(), "one new generation: " + generations);
            assertTrue(generations.get(0) > firstGeneration);
            assertEquals(Set.of(0, 1, 2), live.stream().map(Kolo::rank).collect(Collectors.toSet()));
            live.forEach(k -> assertEquals(3, k.size()));
            assertEquals(6f, sumOfRanksPlusOne(byRank(live)), "the new ring works");
            System.out.println("survivors regrouped " + regroupMillis + " ms after the loss");

            // A newcomer: admitted when the running ranks agree on it at a boundary.
            CompletableFuture<Kolo> joining = CompletableFuture.supplyAsync(() -> Kolo.init(elastic(job, 4).build()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            List<Kolo> ranks = byRank(live);
            while (true) {
                // The "commit" of a training loop: agree on whether anyone saw a pending change.
                List<Tensor> flags = CollectiveMatrixTest.onAll(ranks, (r, k) -> k.allreduce("pending?",
                        Tensor.of(new int[] {k.membershipChangePending() ? 1 : 0}, 1), ReduceOp.MAX));
                if (flags.get(0).toIntArray()[0] == 1) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "the newcomer was never announced");
                Thread.sleep(100);
            }
            CollectiveMatrixTest.onAll(ranks, (r, k) -> {
                k.rejoin();
                return null;
            });
            newcomer = joining.get(30, TimeUnit.SECONDS);
            live.add(newcomer);
            live.forEach(k -> assertEquals(4, k.size()));
            assertEquals(Set.of(0, 1, 2, 3), live.stream().map(Kolo::rank).collect(Collectors.toSet()));
            assertEquals(10f, sumOfRanksPlusOne(byRank(live)));
        } finally {
            live.parallelStream().forEach(Kolo::close);
            four.workers.forEach(Kolo::close);
        }
    }

    @Test
    void aMinorityCannotFormAGenerationAndAFixedJobCannotRejoin() throws Exception {
        String job = LocalJob.uniqueName("minority");
        try (LocalJob four = LocalJob.start(job, 4, i -> elastic(job, 4).set(Settings.ELASTIC_TIMEOUT, Duration.ofSeconds(4)).build())) {
            List<Kolo> ranks = byRank(four.workers);
            ranks.get(2).clusterNode().hazelcast().getLifecycleService().terminate();
            ranks.get(3).clusterNode().hazelcast().getLifecycleService().terminate();
            List<String> errors = CollectiveMatrixTest.onAll(ranks.subList(0, 2), (r, k) -> {
                try {
                    k.rejoin();
                    return "formed";
                } catch (KoloException e) {
                    return e.getMessage();
                }
            });
            for (String e : errors) {
                assertTrue(e.contains("strict majority of the last one's 4"), e);
                assertTrue(e.contains("2 workers present"), e);
            }
        }
        String fixed = LocalJob.uniqueName("fixed");
        try (LocalJob one = LocalJob.start(fixed, 1, i -> LocalJob.config(fixed, 1).build())) {
            KoloException e = assertThrows(KoloException.class, () -> one.workers.get(0).rejoin());
            assertTrue(e.getMessage().contains("elastic"), e.getMessage());
        }
    }
}
