package dev.kolo.elastic.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.elastic.InProcessJob;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Settings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sampler on real jobs of 1 to 5 workers in this JVM: every rank gets as many batches as the others, the ranks'
 * batches are disjoint and together the data set (the last step padded from the start, or the tail dropped), each
 * epoch is shuffled anew and alike on every rank, the rest of an epoch is split among the ranks present after a
 * change of size, unequal shares work, and bad input fails on every rank with the fix named and nothing lost.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ElasticSamplerTest {
    static final Map<Integer, InProcessJob> JOBS = new HashMap<>();

    @BeforeAll
    static void formJobs() throws Exception {
        // Below the kernel's ephemeral ports (from 32768): a client socket there would occupy a member's port.
        int base = 17000 + 200 * new Random().nextInt(75);
        // The largest job first, while this JVM holds no other member: fifteen members of five jobs share it.
        for (int np = 5; np >= 1; np--) {
            int port = base + 20 * np;
            JOBS.put(np, new InProcessJob(np, b -> b.set(Settings.CLUSTER_PORT, port)));
        }
    }

    @AfterAll
    static void close() {
        JOBS.values().forEach(InProcessJob::close);
    }

    /** Runs {@code action} on every worker of the job of {@code np}; the results in rank order. */
    static <T> List<T> byRank(int np, Function<Kolo, T> action) throws Exception {
        List<Map.Entry<Integer, T>> results = JOBS.get(np).onAll(k -> Map.entry(k.rank(), action.apply(k)));
        List<T> out = new ArrayList<>();
        results.stream().sorted(Map.Entry.comparingByKey()).forEach(e -> out.add(e.getValue()));
        return out;
    }

    /** One epoch on every rank of a job of {@code np}, stepping after each batch; per rank, its batches in order. */
    static List<List<int[]>> epoch(int np, int count, Function<Kolo, ElasticSampler> make) throws Exception {
        return byRank(np, k -> {
            ElasticSampler s = make.apply(k);
            List<int[]> batches = new ArrayList<>();
            long epoch = s.epoch();
            for (Iterator<int[]> it = s.batches(count); it.hasNext(); ) {
                batches.add(it.next());
                s.stepped();
            }
            assertEquals(epoch + 1, s.epoch(), "stepping through the epoch moves to the next");
            assertEquals(0, s.samplesTaken());
            return batches;
        });
    }

    @Test
    void everyRankGetsAsManyBatchesTheyAreDisjointAndTogetherTheDataSet() throws Exception {
        for (int np = 1; np <= 5; np++) {
            for (int count : new int[] {np, 97, 1000}) {
                for (int batch : new int[] {1, 3, 7}) {
                    for (boolean dropLast : new boolean[] {false, true}) {
                        if (dropLast && count < batch * np) {
                            continue;
                        }
                        String what = "np " + np + ", " + count + " samples, batch " + batch + ", drop-last " + dropLast;
                        List<List<int[]>> ranks = epoch(np, count, k -> ElasticSampler.builder(k).batchSize(batch)
                                .seed(7).dropLast(dropLast).build());
                        int global = batch * np;
                        int steps = ranks.get(0).size();
                        assertEquals(dropLast ? count / global : (count + global - 1) / global, steps, what);
                        int[] seen = new int[count];
                        for (List<int[]> rank : ranks) {
                            assertEquals(steps, rank.size(), "every rank as many batches: " + what);
                            for (int[] b : rank) {
                                assertEquals(batch, b.length, what);
                                for (int i : b) {
                                    seen[i]++;
                                }
                            }
                        }
                        int extra = steps * global - count;
                        int missing = 0;
                        int repeated = 0;
                        for (int n : seen) {
                            missing += n == 0 ? 1 : 0;
                            repeated += Math.max(0, n - 1);
                            assertTrue(n <= 1 + (global - 1) / count + 1, what);
                        }
                        if (dropLast) {
                            assertEquals(0, repeated, "no sample twice: " + what);
                            assertEquals(count % global, missing, "only the tail left out: " + what);
                        } else {
                            assertEquals(0, missing, "every sample: " + what);
                            assertEquals(extra, repeated, "only the last step's padding repeats: " + what);
                        }
                    }
                }
            }
        }
    }

    @Test
    void eachEpochIsShuffledAnewAndAlikeOnEveryRank() throws Exception {
        List<int[]> orders = new ArrayList<>();
        for (int run = 0; run < 2; run++) {
            List<List<List<int[]>>> epochs = byRank(3, k -> {
                ElasticSampler s = ElasticSampler.builder(k).batchSize(5).seed(11).build();
                List<List<int[]>> both = new ArrayList<>();
                for (int e = 0; e < 2; e++) {
                    List<int[]> batches = new ArrayList<>();
                    for (Iterator<int[]> it = s.batches(150); it.hasNext(); ) {
                        batches.add(it.next());
                        s.stepped();
                    }
                    both.add(batches);
                }
                return both;
            });
            for (int e = 0; e < 2; e++) {
                int[] order = new int[150];
                int at = 0;
                for (int step = 0; step < 10; step++) {
                    for (int r = 0; r < 3; r++) {
                        for (int i : epochs.get(r).get(e).get(step)) {
                            order[at++] = i;
                        }
                    }
                }
                int[] sorted = order.clone();
                Arrays.sort(sorted);
                for (int i = 0; i < 150; i++) {
                    assertEquals(i, sorted[i], "the ranks' batches of epoch " + e + " are one permutation");
                }
                orders.add(order);
            }
        }
        assertFalse(Arrays.equals(orders.get(0), orders.get(1)), "epoch 1 is shuffled anew");
        assertArrayEquals(orders.get(0), orders.get(2), "the same seed gives the same epochs again");
        assertArrayEquals(orders.get(1), orders.get(3));
        int[] unshuffled = epoch(1, 20, k -> ElasticSampler.builder(k).batchSize(20).shuffle(false).build())
                .get(0).get(0);
        for (int i = 0; i < 20; i++) {
            assertEquals(i, unshuffled[i], "without shuffling the data set's own order");
        }
    }

    @Test
    void theRestOfAnEpochIsSplitAmongTheRanksPresentAfterAChangeOfSize() throws Exception {
        int count = 301;
        // 4 steps at np 3 (batch 4: 48 samples), then the rest at np 2 and, after 5 more steps, at np 5.
        List<List<int[]>> first = byRank(3, k -> take(ElasticSampler.builder(k).batchSize(4).seed(3).build(),
                count, 0, 0, 4));
        List<List<int[]>> second = byRank(2, k -> take(ElasticSampler.builder(k).batchSize(4).seed(3).build(),
                count, 0, 48, 5));
        List<List<int[]>> third = byRank(5, k -> take(ElasticSampler.builder(k).batchSize(4).seed(3).build(),
                count, 0, 48 + 40, Integer.MAX_VALUE));
        int[] seen = new int[count];
        for (List<List<int[]>> part : List.of(first, second, third)) {
            for (List<int[]> rank : part) {
                assertEquals(part.get(0).size(), rank.size());
                for (int[] b : rank) {
                    for (int i : b) {
                        seen[i]++;
                    }
                }
            }
        }
        int padded = 0;
        for (int n : seen) {
            assertTrue(n >= 1, "no sample skipped");
            padded += n - 1;
        }
        assertEquals((20 - (count - 88) % 20) % 20, padded, "repeated only to fill the last step at np 5");
    }

    /** From position {@code (epoch, taken)}, at most {@code steps} batches, stepping after each. */
    static List<int[]> take(ElasticSampler s, int count, long epoch, long taken, int steps) {
        s.seek(epoch, taken);
        List<int[]> out = new ArrayList<>();
        Iterator<int[]> it = s.batches(count);
        while (out.size() < steps && it.hasNext()) {
            out.add(it.next());
            s.stepped();
        }
        return out;
    }

    @Test
    void unequalSharesOfAGlobalBatch() throws Exception {
        List<List<int[]>> ranks = epoch(3, 60, k -> ElasticSampler.builder(k).split(BatchSplit.fixed(1, 2, 3))
                .build());
        for (int r = 0; r < 3; r++) {
            assertEquals(10, ranks.get(r).size());
            assertEquals(r + 1, ranks.get(r).get(0).length);
        }
        List<double[]> weights = byRank(3, k -> {
            ElasticSampler s = ElasticSampler.builder(k).split(BatchSplit.global(10)).build();
            return new double[] {s.batchSize(), s.globalBatchSize(), s.gradientWeight()};
        });
        assertArrayEquals(new double[] {4, 10, 1.2}, weights.get(0), 1e-12);
        assertArrayEquals(new double[] {3, 10, 0.9}, weights.get(2), 1e-12);
    }

    @Test
    void aValidationSamplerThatIsNeverSteppedMovesToTheNextEpochAfterEachPass() throws Exception {
        List<long[]> epochs = byRank(2, k -> {
            ElasticSampler s = ElasticSampler.builder(k).batchSize(10).build();
            long[] out = new long[3];
            for (int pass = 0; pass < 3; pass++) {
                Iterator<int[]> it = s.batches(40);
                while (it.hasNext()) {
                    it.next();
                }
                it.hasNext();
                out[pass] = s.epoch();
            }
            return out;
        });
        assertArrayEquals(new long[] {1, 2, 3}, epochs.get(1));
    }

    @Test
    void ranksThatDisagreeFailAlikeNamingWhatDiffersAndTheFixAndLoseNothing() throws Exception {
        List<String> errors = byRank(4, k -> {
            ElasticSampler s = ElasticSampler.builder(k).batchSize(2).seed(k.rank() == 2 ? 5 : 1).build();
            s.seek(1, 16);
            String message = assertThrows(IllegalArgumentException.class,
                    () -> s.batches(k.rank() == 1 ? 99 : 100)).getMessage();
            assertEquals(1, s.epoch(), "the position is kept");
            assertEquals(16, s.samplesTaken());
            return message;
        });
        for (String m : errors) {
            assertEquals(errors.get(0), m, "every rank the same error");
        }
        assertTrue(errors.get(0).contains("data set size (99 on rank 1; 100 on ranks 0, 2, 3)"), errors.get(0));
        assertTrue(errors.get(0).contains("check that every worker reads the same files"), errors.get(0));
        assertTrue(errors.get(0).contains("seed (1 on ranks 0, 1, 3; 5 on rank 2)"), errors.get(0));
        assertTrue(errors.get(0).contains("give every rank the same seed"), errors.get(0));
        List<Integer> after = byRank(4, k -> {
            ElasticSampler s = ElasticSampler.builder(k).batchSize(2).seed(1).build();
            return s.batches(100).next().length;
        });
        assertEquals(List.of(2, 2, 2, 2), after, "the job goes on once the input is right");
    }

    @Test
    void aDataSetSmallerThanTheJobOrABadBatchIsRefusedOnEveryRank() throws Exception {
        List<String> small = byRank(5, k -> assertThrows(IllegalArgumentException.class,
                () -> ElasticSampler.builder(k).batchSize(1).build().batches(4)).getMessage());
        for (String m : small) {
            assertTrue(m.contains("a data set of 4 samples cannot be shared by 5 ranks")
                    && m.contains("use a larger data set or fewer workers"), m);
        }
        List<String> dropped = byRank(2, k -> assertThrows(IllegalArgumentException.class,
                () -> ElasticSampler.builder(k).batchSize(8).dropLast(true).build().batches(10)).getMessage());
        assertTrue(dropped.get(1).contains("leaves no step of 16"), dropped.get(1));
        Kolo one = JOBS.get(1).workers.get(0);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ElasticSampler.builder(one).batchSize(0))
                .getMessage().contains("must be at least 1 (got 0)"));
        assertTrue(assertThrows(IllegalStateException.class, () -> ElasticSampler.builder(one).build())
                .getMessage().contains("batchSize(n)"));
        assertTrue(assertThrows(IllegalStateException.class,
                () -> ElasticSampler.builder(one).batchSize(1).build().stepped()).getMessage()
                .contains("call batches(datasetSize) first"));
        String wrongSize = assertThrows(IllegalArgumentException.class,
                () -> ElasticSampler.builder(one).split(BatchSplit.fixed(2, 2)).build().batches(10)).getMessage();
        assertTrue(wrongSize.contains("are for 2 ranks but the job has 1"), wrongSize);
        assertNotEquals(0, ElasticSampler.builder(one).batchSize(3).build().stepsPerEpoch(10));
    }

    @Test
    void partitionedEveryRankVisitsEachSampleOfItsOwnPartitionOnceAnEpochAndResumesWithinIt() throws Exception {
        int partition = 50;
        int batch = 4;
        // np 3, drop-last: 12 steps take 48 of each rank's 50 samples; 5 steps, then the rest from a fresh sampler
        // at the position the first one reached (as a restore from a checkpoint sets it).
        List<List<int[]>> before = byRank(3, k -> take(ElasticSampler.builder(k).batchSize(batch).seed(9)
                .dropLast(true).partitioned(true).build(), partition * 3, 0, 0, 5));
        List<List<int[]>> after = byRank(3, k -> take(ElasticSampler.builder(k).batchSize(batch).seed(9)
                .dropLast(true).partitioned(true).build(), partition * 3, 0, 5L * batch * 3, Integer.MAX_VALUE));
        for (int r = 0; r < 3; r++) {
            assertEquals(5, before.get(r).size());
            assertEquals(7, after.get(r).size(), "12 steps an epoch at np 3");
            int[] seen = new int[partition];
            for (List<int[]> part : List.of(before.get(r), after.get(r))) {
                for (int[] b : part) {
                    for (int i : b) {
                        seen[i]++; // an index past the partition would throw here
                    }
                }
            }
            int once = 0;
            for (int n : seen) {
                assertTrue(n <= 1, "no sample twice in an epoch");
                once += n;
            }
            assertEquals(48, once, "rank " + r + ": every sample of its partition but the 2 that fill no step");
        }
        assertArrayEquals(before.get(0).get(0), before.get(1).get(0), "one order, each rank over its own samples");
        String uneven = assertThrows(Exception.class, () -> byRank(2, k -> ElasticSampler.builder(k).batchSize(2)
                .partitioned(true).build().batches(41))).getMessage();
        assertTrue(uneven.contains("are not 2 equal partitions") && uneven.contains("smallest partition"), uneven);
    }
}
