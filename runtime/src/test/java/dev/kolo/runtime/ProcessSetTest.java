package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Process sets through the public API on real clusters of 3 and 4 workers (one each, shared by the tests): every
 * collective among a set's ranks against the sequential reference, sets that overlap each other and the job
 * running side by side, a set that does not wait for another, names that collide across sets, the errors of a
 * non-member and of ranks that ask for different sets, and closing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ProcessSetTest {
    private final Map<Integer, LocalJob> jobs = new ConcurrentHashMap<>();

    /** A job of {@code size} workers, with their metrics endpoints on (the sets' meters are checked). */
    private List<Kolo> ranks(int size) {
        return jobs.computeIfAbsent(size, n -> {
            String job = LocalJob.uniqueName("sets");
            return LocalJob.start(job, n, i -> {
                try {
                    return LocalJob.config(job, n).metricsPort(ObservabilityTest.freePort()).build();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }).byRank();
    }

    @AfterAll
    void close() {
        jobs.values().parallelStream().forEach(LocalJob::close);
    }

    /** Every rank creates the same sets, in the same order; results by job rank. */
    private static List<ProcessSet> create(List<Kolo> ranks, int... members) throws Exception {
        return CollectiveMatrixTest.onAll(ranks, (r, k) -> k.processSet(members));
    }

    /** The sequential reference of a set's allreduce: its members' inputs, in set rank order. */
    private static void assertReduced(List<Tensor> setInputs, Tensor got, DType dtype, ReduceOp op, String what) {
        double[] expected = Reference.reduce(setInputs, dtype, op, 1.0, 1.0);
        double[] magnitude = Reference.magnitude(setInputs, op, 1.0, 1.0);
        double[] values = got.toDoubleArray();
        assertEquals(expected.length, values.length, what);
        for (int i = 0; i < values.length; i++) {
            assertEquals(expected[i], values[i], Reference.tolerance(dtype, magnitude[i], setInputs.size()),
                    what + " element " + i);
        }
    }

    @Test
    void everyCollectiveRunsAmongTheSetsRanksInTheSetsOrder() throws Exception {
        List<Kolo> ranks = ranks(3);
        // Set rank 0 is the job's rank 2: ranks, sizes and roots are the set's.
        List<ProcessSet> sets = create(ranks, 2, 0);
        for (int r = 0; r < 3; r++) {
            ProcessSet s = sets.get(r);
            assertEquals(List.of(2, 0), s.ranks());
            assertEquals(2, s.size());
            assertEquals(r == 2 ? 0 : r == 0 ? 1 : -1, s.rank(), "set rank of job rank " + r);
            assertEquals(r != 1, s.contains(r));
        }
        List<Kolo> members = List.of(ranks.get(2), ranks.get(0)); // by set rank
        List<ProcessSet> handles = List.of(sets.get(2), sets.get(0));
        long[] lengths = {0, 1, 3, 1001};
        for (DType dtype : List.of(DType.FLOAT32, DType.FLOAT64, DType.INT32, DType.BFLOAT16)) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVERAGE)) {
                for (long length : lengths) {
                    String name = "ar." + dtype + "." + op + "." + length;
                    List<Tensor> inputs = new ArrayList<>();
                    for (int sr = 0; sr < 2; sr++) {
                        inputs.add(Reference.input(dtype, length, 17L * sr + length, op));
                    }
                    List<Tensor> out = CollectiveMatrixTest.onAll(members,
                            (sr, k) -> handles.get(sr).allreduce(name, inputs.get(sr), op));
                    CollectiveMatrixTest.assertSameBytes(out);
                    assertReduced(inputs, out.get(0), dtype, op, name);
                }
            }
        }
        // allgather: rows differ between the set's ranks, in set rank order
        List<Tensor> gathered = CollectiveMatrixTest.onAll(members, (sr, k) -> handles.get(sr).allgather("ag",
                Tensor.of(sr == 0 ? new float[] {1, 2, 3} : new float[] {4}, sr == 0 ? 3 : 1)));
        for (Tensor t : gathered) {
            assertArrayEquals(new float[] {1, 2, 3, 4}, t.toFloatArray());
        }
        // broadcast from set rank 1 (the job's rank 0)
        List<Tensor> broadcast = CollectiveMatrixTest.onAll(members, (sr, k) -> handles.get(sr).broadcast("bc",
                Tensor.of(new double[] {sr + 10.0, sr + 20.0}, 2), 1));
        for (Tensor t : broadcast) {
            assertArrayEquals(new double[] {11.0, 21.0}, t.toDoubleArray());
        }
        // reducescatter: 3 rows over 2 ranks, set rank 0 gets 2 of them
        List<Tensor> scattered = CollectiveMatrixTest.onAll(members, (sr, k) -> handles.get(sr).reducescatter("rs",
                Tensor.of(new int[] {1 + sr, 2 + sr, 3 + sr}, 3), ReduceOp.SUM));
        assertArrayEquals(new int[] {3, 5}, scattered.get(0).toIntArray());
        assertArrayEquals(new int[] {7}, scattered.get(1).toIntArray());
        // alltoall: set rank 0 sends 1 row to itself and 2 to set rank 1; set rank 1 sends 0 and 1
        List<Tensor> exchanged = CollectiveMatrixTest.onAll(members, (sr, k) -> handles.get(sr).alltoall("a2a",
                sr == 0 ? Tensor.of(new int[] {10, 11, 12}, 3) : Tensor.of(new int[] {20}, 1),
                sr == 0 ? new int[] {1, 2} : new int[] {0, 1}));
        assertArrayEquals(new int[] {10}, exchanged.get(0).toIntArray());
        assertArrayEquals(new int[] {11, 12, 20}, exchanged.get(1).toIntArray());
        // grouped allreduce and barrier
        List<List<Tensor>> grouped = CollectiveMatrixTest.onAll(members, (sr, k) -> handles.get(sr)
                .groupedAllreduce("grp", List.of(Tensor.of(new float[] {sr}, 1), Tensor.of(new float[] {2, sr}, 2)),
                        ReduceOp.SUM));
        for (List<Tensor> g : grouped) {
            assertArrayEquals(new float[] {1}, g.get(0).toFloatArray());
            assertArrayEquals(new float[] {4, 1}, g.get(1).toFloatArray());
        }
        CollectiveMatrixTest.onAll(members, (sr, k) -> {
            handles.get(sr).barrier();
            return null;
        });
        // the set's ops are counted under its id
        Timer latency = ranks.get(2).meterRegistry().find("kolo.process_set.latency")
                .tags("process_set", Integer.toString(sets.get(2).id()), "op", "allreduce").timer();
        assertNotNull(latency, "kolo_process_set_latency_seconds{process_set, op=allreduce}");
        assertTrue(latency.count() > 0);
        CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            sets.get(r).close();
            return null;
        });
        KoloException closed = assertThrows(KoloException.class,
                () -> sets.get(0).allreduce("after-close", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
        assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
    }

    @Test
    void joinIsTheSetsOwn() throws Exception {
        List<Kolo> ranks = ranks(3);
        List<ProcessSet> sets = create(ranks, 2, 0);
        // Set rank 0 (the job's rank 2) joins; set rank 1 still reduces, the joined rank adding zeros.
        java.util.concurrent.CompletableFuture<Integer> joined = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> sets.get(2).join());
        Tensor t = sets.get(0).allreduce("after-join", Tensor.of(new float[] {5}, 1), ReduceOp.SUM);
        assertArrayEquals(new float[] {5}, t.toFloatArray());
        assertEquals(1, sets.get(0).join(), "set rank 1 joined last");
        assertEquals(1, joined.get(60, TimeUnit.SECONDS));
        // The job never joined: its ops are untouched.
        List<Tensor> out = CollectiveMatrixTest.onAll(ranks, (r, k) -> k.allreduce("job-after-set-join",
                Tensor.of(new float[] {r}, 1), ReduceOp.SUM));
        out.forEach(x -> assertArrayEquals(new float[] {3}, x.toFloatArray()));
        CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            sets.get(r).close();
            return null;
        });
    }

    @Test
    void overlappingSetsAndTheJobRunSideBySideUnderTheSameNames() throws Exception {
        List<Kolo> ranks = ranks(4);
        List<ProcessSet> low = create(ranks, 0, 1, 2);
        List<ProcessSet> high = create(ranks, 1, 2, 3);
        // Each rank submits "grad" to every group it belongs to, with a shape of that group's own, and ranks 1 and
        // 2 in opposite orders: one sequence of ops shared by the groups would deadlock or mismatch.
        List<Map<String, float[]>> results = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            List<CompletableFuture<Tensor>> futures = new ArrayList<>();
            List<String> groups = new ArrayList<>();
            List<Runnable> submits = new ArrayList<>();
            submits.add(() -> {
                groups.add("job");
                futures.add(k.allreduceAsync("grad", Tensor.of(new float[] {r, 1}, 2), ReduceOp.SUM));
            });
            if (low.get(r).rank() >= 0) {
                submits.add(() -> {
                    groups.add("low");
                    futures.add(low.get(r).allreduceAsync("grad", Tensor.of(new float[] {r, 1, 0}, 3), ReduceOp.SUM));
                });
            }
            if (high.get(r).rank() >= 0) {
                submits.add(() -> {
                    groups.add("high");
                    futures.add(high.get(r).allreduceAsync("grad", Tensor.of(new float[] {r, 1, 0, 0}, 4),
                            ReduceOp.SUM));
                });
            }
            if (r == 2) {
                java.util.Collections.reverse(submits);
            }
            submits.forEach(Runnable::run);
            Map<String, float[]> out = new java.util.HashMap<>();
            for (int i = 0; i < futures.size(); i++) {
                out.put(groups.get(i), k.await(futures.get(i), "grad").toFloatArray());
            }
            return out;
        });
        for (int r = 0; r < 4; r++) {
            Map<String, float[]> out = results.get(r);
            assertArrayEquals(new float[] {6, 4}, out.get("job"), "job, rank " + r);
            if (r <= 2) {
                assertArrayEquals(new float[] {3, 3, 0}, out.get("low"), "low set, rank " + r);
            }
            if (r >= 1) {
                assertArrayEquals(new float[] {6, 3, 0, 0}, out.get("high"), "high set, rank " + r);
            }
        }
        CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            low.get(r).close();
            high.get(r).close();
            return null;
        });
    }

    @Test
    void aSetsOpsDoNotWaitForAnotherSets() throws Exception {
        List<Kolo> ranks = ranks(4);
        List<ProcessSet> left = create(ranks, 0, 1);
        List<ProcessSet> right = create(ranks, 2, 3);
        // Rank 2 submits to the right set; rank 3 holds back until the left set has run an op of its own.
        CompletableFuture<Tensor> rightOnRank2 = right.get(2).allreduceAsync("held", Tensor.of(new float[] {2}, 1),
                ReduceOp.SUM);
        List<Tensor> leftOut = CollectiveMatrixTest.onAll(ranks.subList(0, 2),
                (r, k) -> left.get(r).allreduce("free", Tensor.of(new float[] {r + 1}, 1), ReduceOp.SUM));
        assertArrayEquals(new float[] {3}, leftOut.get(0).toFloatArray());
        assertFalse(rightOnRank2.isDone(), "the right set's op cannot complete before rank 3 submits it");
        Tensor onRank3 = right.get(3).allreduce("held", Tensor.of(new float[] {3}, 1), ReduceOp.SUM);
        assertArrayEquals(new float[] {5}, onRank3.toFloatArray());
        assertArrayEquals(new float[] {5}, ranks.get(2).await(rightOnRank2, "held").toFloatArray());
        CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            left.get(r).close();
            right.get(r).close();
            return null;
        });
    }

    @Test
    void aNonMemberIsRefusedAtOnceAndBadSetsFailOnEveryRank() throws Exception {
        List<Kolo> ranks = ranks(4);
        List<ProcessSet> pair = create(ranks, 0, 1);
        KoloException outside = assertThrows(KoloException.class,
                () -> pair.get(3).allreduce("x", Tensor.of(new float[] {1}, 1), ReduceOp.SUM));
        assertTrue(outside.getMessage().contains("rank 3 is not a member of process set " + pair.get(3).id()),
                outside.getMessage());
        assertThrows(KoloException.class, () -> pair.get(2).allgatherAsync("y", Tensor.of(new float[] {1}, 1)));
        assertEquals(-1, pair.get(2).rank());

        // Rank 0 asks for another set than the others: every rank is told what each asked for.
        List<String> mismatch = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            try {
                k.processSet(r == 0 ? new int[] {0, 1} : new int[] {0, 2});
                return "created";
            } catch (CollectiveMismatchException e) {
                return e.getMessage();
            }
        });
        int id = pair.get(0).id() + 1;
        for (String m : mismatch) {
            assertTrue(m.contains("rank 0 asked for set " + id + " of ranks [0, 1]") && m.contains("rank 1 asked for set "
                    + id + " of ranks [0, 2]") && m.contains("same ranks in the same order"), m);
        }
        // Ranks that are not the job's, or repeated: refused on every rank, naming the rank.
        List<String> invalid = CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            try {
                k.processSet(1, 7);
                return "created";
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        });
        invalid.forEach(m -> assertTrue(m.contains("rank 7 is not a rank of the job (0..3)"), m));
        // Nothing was lost: the next set is numbered as every rank expects, and works.
        List<ProcessSet> next = create(ranks, 3, 1);
        assertEquals(id, next.get(0).id());
        List<Tensor> out = CollectiveMatrixTest.onAll(List.of(ranks.get(3), ranks.get(1)),
                (sr, k) -> next.get(k.rank()).allreduce("z", Tensor.of(new float[] {sr + 1}, 1), ReduceOp.SUM));
        assertArrayEquals(new float[] {3}, out.get(0).toFloatArray());
        CollectiveMatrixTest.onAll(ranks, (r, k) -> {
            pair.get(r).close();
            next.get(r).close();
            return null;
        });
    }
}
