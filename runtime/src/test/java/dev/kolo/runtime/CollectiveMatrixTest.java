package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every collective through the public API on real clusters of 2 to 5 members (one per size, shared by the
 * cases), against a sequential reference, with byte-identical results on every rank.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CollectiveMatrixTest {
    private final Map<Integer, LocalJob> jobs = new ConcurrentHashMap<>();

    private List<Kolo> ranks(int size) {
        LocalJob job = jobs.computeIfAbsent(size, LocalJob::start);
        return job.byRank();
    }

    @AfterAll
    void close() {
        jobs.values().parallelStream().forEach(LocalJob::close);
    }

    /** Runs {@code op(rank, kolo)} on every rank at once, as training loops would; results by rank. */
    static <T> List<T> onAll(List<Kolo> ranks, BiFunction<Integer, Kolo, T> op) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(ranks.size());
        try {
            List<Future<T>> fs = new ArrayList<>();
            for (int r = 0; r < ranks.size(); r++) {
                int rank = r;
                fs.add(pool.submit(() -> op.apply(rank, ranks.get(rank))));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> f : fs) {
                out.add(f.get(120, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    static void assertSameBytes(List<Tensor> results) {
        byte[] first = results.get(0).toByteArray();
        for (int r = 1; r < results.size(); r++) {
            assertArrayEquals(first, results.get(r).toByteArray(), "rank " + r + " differs from rank 0");
        }
    }

    @ParameterizedTest(name = "allreduce, every dtype and op, ring of {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void allreduceEveryDtypeOpAndOddLength(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        long[] lengths = {0, 1, size - 1, 5L * size + 3};
        for (DType dtype : DType.values()) {
            for (ReduceOp op : Reference.ELEMENT_WISE) {
                for (long length : lengths) {
                    String name = "ar." + dtype + "." + op + "." + length;
                    List<Tensor> inputs = new ArrayList<>();
                    for (int r = 0; r < size; r++) {
                        inputs.add(Reference.input(dtype, length, 31L * r + length, op));
                    }
                    double pre = op == ReduceOp.PRODUCT ? 1.0 : 0.5;
                    double post = 2.0;
                    List<Tensor> out = onAll(ranks, (r, k) -> k.allreduce(name, inputs.get(r), op, pre, post));
                    assertSameBytes(out);
                    double[] expected = Reference.reduce(inputs, dtype, op, pre, post);
                    double[] magnitude = Reference.magnitude(inputs, op, pre, post);
                    double[] got = out.get(0).toDoubleArray();
                    assertEquals(expected.length, got.length);
                    for (int i = 0; i < got.length; i++) {
                        assertEquals(expected[i], got[i], Reference.tolerance(dtype, magnitude[i], size),
                                name + " element " + i);
                    }
                    assertArrayEquals(inputs.get(0).toByteArray(),
                            Reference.input(dtype, length, length, op).toByteArray(), "input must not change");
                }
            }
        }
    }

    /**
     * Adasum through the public API: a burst of tensors submitted at once (which fusion would put in one buffer
     * were they summed) and a grouped allreduce, each tensor combined with its own dot products as the paper's
     * recursive formulation says; other collectives and integer tensors are refused on every rank, naming the fix.
     */
    @ParameterizedTest(name = "Adasum, ring of {0}")
    @ValueSource(ints = {3, 4})
    void adasumCombinesEachTensorOnItsOwn(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        int[] lengths = {1, 7, 1000, 4099};
        int steps = 3; // later steps are cached: small tensors would travel in the agreement round
        List<List<Tensor>> out = onAll(ranks, (r, k) -> {
            List<Tensor> got = new ArrayList<>();
            for (int step = 0; step < steps; step++) {
                List<CompletableFuture<Tensor>> fs = new ArrayList<>();
                for (int t = 0; t < lengths.length; t++) {
                    fs.add(k.allreduceAsync("adasum." + t, gradient(r, t, lengths[t]), ReduceOp.ADASUM, 1.0, 1.0));
                }
                got.addAll(fs.stream().map(CompletableFuture::join).toList());
            }
            List<Tensor> group = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                group.add(gradient(r, 10 + t, 50 + t));
            }
            got.addAll(k.groupedAllreduce("adasum.group", group, ReduceOp.ADASUM));
            return got;
        });
        int[] all = new int[steps * lengths.length + 3];
        int[] seeds = new int[all.length];
        for (int t = 0; t < all.length; t++) {
            boolean burst = t < steps * lengths.length;
            all[t] = burst ? lengths[t % lengths.length] : 50 + t - steps * lengths.length;
            seeds[t] = burst ? t % lengths.length : 10 + t - steps * lengths.length;
        }
        for (int t = 0; t < all.length; t++) {
            int index = t;
            List<Tensor> results = out.stream().map(l -> l.get(index)).toList();
            assertSameBytes(results);
            double[][] inputs = new double[size][];
            for (int r = 0; r < size; r++) {
                inputs[r] = gradient(r, seeds[t], all[t]).toDoubleArray();
            }
            double[] expected = dev.kolo.testing.AdasumReference.of(inputs);
            double largest = java.util.Arrays.stream(expected).map(Math::abs).max().orElse(0);
            double[] got = results.get(0).toDoubleArray();
            for (int i = 0; i < got.length; i++) {
                assertEquals(expected[i], got[i], 1e-5 * largest, "tensor " + t + " element " + i);
            }
        }
        List<String> refused = onAll(ranks, (r, k) -> {
            IllegalArgumentException scatter = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalArgumentException.class,
                    () -> k.reducescatter("adasum.rs", Tensor.of(new float[size], size), ReduceOp.ADASUM));
            IllegalArgumentException ints = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalArgumentException.class,
                    () -> k.allreduce("adasum.int", Tensor.of(new int[3], 3), ReduceOp.ADASUM));
            // Nothing was lost: the job goes on.
            k.allreduce("adasum.after", Tensor.of(new float[] {1f}, 1), ReduceOp.SUM);
            return scatter.getMessage() + " | " + ints.getMessage();
        });
        for (String m : refused) {
            assertTrue(m.contains("only allreduce") && m.contains("use SUM or AVERAGE") && m.contains("INT32"), m);
        }
    }

    /** A float32 gradient of rank {@code r}: a direction shared by the ranks plus noise of the rank's own. */
    private static Tensor gradient(int r, int seed, int count) {
        java.util.SplittableRandom shared = new java.util.SplittableRandom(seed);
        java.util.SplittableRandom own = new java.util.SplittableRandom(1000L * seed + r);
        float[] v = new float[count];
        for (int i = 0; i < count; i++) {
            v[i] = (float) (shared.nextDouble(-1, 1) * (1 + r) + own.nextDouble(-0.5, 0.5));
        }
        return Tensor.of(v, count);
    }

    @ParameterizedTest(name = "64 MiB float32 allreduce, ring of {0}")
    @ValueSource(ints = {2, 3, 5})
    void largeAllreduce(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        int count = 16 << 20; // 64 MiB of float32
        List<Tensor> out = onAll(ranks, (r, k) -> {
            float[] v = new float[count];
            for (int i = 0; i < count; i++) {
                v[i] = (i % 1000) + r;
            }
            return k.allreduce("big", Tensor.of(v, count), ReduceOp.SUM);
        });
        assertSameBytes(out);
        float[] got = out.get(0).toFloatArray();
        double rankSum = size * (size - 1) / 2.0;
        for (int i = 0; i < count; i += 997) {
            assertEquals(size * (i % 1000) + rankSum, got[i], 0.0, "element " + i);
        }
        assertEquals(size * (999.0 % 1000) + rankSum, got[999], 0.0);
        assertEquals(size * ((count - 1) % 1000) + rankSum, got[count - 1], 0.0);
    }

    @ParameterizedTest(name = "fused burst equals one-by-one, ring of {0}")
    @ValueSource(ints = {3, 4})
    void fusedBurstMatchesUnfusedOps(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        int tensors = 40;
        List<List<Tensor>> fused = onAll(ranks, (r, k) -> {
            List<CompletableFuture<Tensor>> fs = new ArrayList<>();
            for (int i = 0; i < tensors; i++) {
                fs.add(k.allreduceAsync("burst." + i, Reference.input(DType.FLOAT32, 3 + i, 7L * r + i, ReduceOp.SUM),
                        ReduceOp.SUM));
            }
            return fs.stream().map(CompletableFuture::join).toList();
        });
        for (int i = 0; i < tensors; i++) {
            int t = i;
            List<Tensor> single = onAll(ranks, (r, k) -> k.allreduce("single." + t,
                    Reference.input(DType.FLOAT32, 3 + t, 7L * r + t, ReduceOp.SUM), ReduceOp.SUM));
            for (int r = 0; r < size; r++) {
                assertArrayEquals(single.get(r).toByteArray(), fused.get(r).get(i).toByteArray(), "tensor " + i);
            }
        }
        // Grouped allreduce of the same tensors gives the same bytes again.
        List<List<Tensor>> grouped = onAll(ranks, (r, k) -> {
            List<Tensor> ins = new ArrayList<>();
            for (int i = 0; i < tensors; i++) {
                ins.add(Reference.input(DType.FLOAT32, 3 + i, 7L * r + i, ReduceOp.SUM));
            }
            return k.groupedAllreduce("group", ins, ReduceOp.SUM);
        });
        for (int i = 0; i < tensors; i++) {
            assertArrayEquals(fused.get(0).get(i).toByteArray(), grouped.get(0).get(i).toByteArray());
        }
    }

    @ParameterizedTest(name = "allgather with uneven rows, ring of {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void allgatherUnevenRows(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        long[] rows = {17, 32, 81, 12, 15};
        for (DType dtype : List.of(DType.FLOAT32, DType.INT8, DType.FLOAT64, DType.BFLOAT16)) {
            List<Tensor> inputs = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                Tensor flat = Reference.input(dtype, rows[r] * 3, r, ReduceOp.SUM);
                inputs.add(Tensor.wrap(dtype, flat.buffer().duplicate().asReadOnlyBuffer().isReadOnly()
                        ? copyDirect(flat) : flat.buffer(), rows[r], 3));
            }
            List<Tensor> out = onAll(ranks, (r, k) -> k.allgather("gather." + dtype, inputs.get(r)));
            assertSameBytes(out);
            long total = 0;
            java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
            for (int r = 0; r < size; r++) {
                total += rows[r];
                expected.writeBytes(inputs.get(r).toByteArray());
            }
            assertArrayEquals(new long[] {total, 3}, out.get(0).shape());
            assertArrayEquals(expected.toByteArray(), out.get(0).toByteArray());
        }
    }

    static java.nio.ByteBuffer copyDirect(Tensor t) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocateDirect((int) t.byteSize());
        b.put(t.buffer());
        return b.flip();
    }

    @ParameterizedTest(name = "broadcast from every root, ring of {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void broadcastFromEveryRoot(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        for (int root = 0; root < size; root++) {
            int rt = root;
            List<Tensor> inputs = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                inputs.add(Reference.input(DType.INT64, 1000 + root, 100L * r + root, ReduceOp.SUM));
            }
            List<Tensor> out = onAll(ranks, (r, k) -> k.broadcast("bcast." + rt, inputs.get(r), rt));
            for (int r = 0; r < size; r++) {
                assertArrayEquals(inputs.get(root).toByteArray(), out.get(r).toByteArray(), "rank " + r);
                assertArrayEquals(Reference.input(DType.INT64, 1000 + root, 100L * r + root, ReduceOp.SUM).toByteArray(),
                        inputs.get(r).toByteArray(), "a non-root input stays as it was");
            }
        }
    }

    @ParameterizedTest(name = "reducescatter with uneven rows, ring of {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void reducescatterUnevenRows(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        long rows = 2L * size + (size > 2 ? size - 2 : 1); // not divisible by the size
        List<Tensor> inputs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            Tensor flat = Reference.input(DType.FLOAT32, rows * 2, 5L * r, ReduceOp.SUM);
            inputs.add(Tensor.of(flat.toFloatArray(), rows, 2));
        }
        double[] sum = Reference.reduce(inputs, DType.FLOAT32, ReduceOp.SUM, 1, 1);
        List<Tensor> out = onAll(ranks, (r, k) -> k.reducescatter("rs", inputs.get(r), ReduceOp.SUM));
        long offsetRows = 0;
        for (int r = 0; r < size; r++) {
            long myRows = rows / size + (r < rows % size ? 1 : 0);
            assertArrayEquals(new long[] {myRows, 2}, out.get(r).shape(), "rank " + r);
            double[] got = out.get(r).toDoubleArray();
            for (int i = 0; i < got.length; i++) {
                assertEquals(sum[(int) (offsetRows * 2 + i)], got[i], 1e-4);
            }
            offsetRows += myRows;
        }
    }

    @ParameterizedTest(name = "alltoall with uneven splits, ring of {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void alltoallUnevenSplitsWithZeroRows(int size) throws Exception {
        List<Kolo> ranks = ranks(size);
        // Rank r sends (r + d) % 3 rows to rank d: zero rows occur.
        int[][] splits = new int[size][size];
        for (int r = 0; r < size; r++) {
            for (int d = 0; d < size; d++) {
                splits[r][d] = (r + d) % 3;
            }
        }
        List<Tensor> inputs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rowsOut = java.util.Arrays.stream(splits[r]).sum();
            int[] v = new int[rowsOut * 2];
            for (int i = 0; i < v.length; i++) {
                v[i] = r * 1000 + i;
            }
            inputs.add(Tensor.of(v, rowsOut, 2));
        }
        List<Tensor> out = onAll(ranks, (r, k) -> k.alltoall("a2a", inputs.get(r), splits[r]));
        for (int d = 0; d < size; d++) {
            List<Integer> expected = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int start = 0;
                for (int j = 0; j < d; j++) {
                    start += splits[r][j];
                }
                int[] v = inputs.get(r).toIntArray();
                for (int i = start * 2; i < (start + splits[r][d]) * 2; i++) {
                    expected.add(v[i]);
                }
            }
            assertEquals(expected, java.util.Arrays.stream(out.get(d).toIntArray()).boxed().toList(), "rank " + d);
        }
    }

    @Test
    void joinedRankContributesZerosAndBlocksOtherOps() throws Exception {
        List<Kolo> ranks = ranks(3);
        List<Object> results = onAll(ranks, (r, k) -> {
            if (r == 1) {
                return k.join(); // no more data on rank 1
            }
            Tensor sum = k.allreduce("after-join", Tensor.of(new float[] {r + 1f, 10f}, 2), ReduceOp.SUM);
            Tensor avg = k.allreduce("after-join-avg", Tensor.of(new float[] {3f}, 1), ReduceOp.AVERAGE);
            String gatherError;
            try {
                k.allgather("gather-while-joined", Tensor.of(new float[] {1f}, 1));
                gatherError = "none";
            } catch (KoloException e) {
                gatherError = e.getMessage();
            }
            int last = k.join();
            return List.of(sum, avg, gatherError, last);
        });
        int lastJoined = (Integer) ((List<?>) results.get(0)).get(3);
        assertTrue(lastJoined == 0 || lastJoined == 2);
        assertEquals(lastJoined, results.get(1), "join() returns the same last rank everywhere");
        for (int r : new int[] {0, 2}) {
            List<?> res = (List<?>) results.get(r);
            assertArrayEquals(new float[] {1f + 3f, 20f}, ((Tensor) res.get(0)).toFloatArray(), "rank 1 adds zeros");
            assertArrayEquals(new float[] {2f}, ((Tensor) res.get(1)).toFloatArray(), "AVERAGE divides by 3, not 2");
            assertTrue(((String) res.get(2)).contains("have joined"), (String) res.get(2));
            assertEquals(lastJoined, res.get(3));
        }
    }

    @Test
    void mismatchesFailOnEveryRankAndTheNextOpWorks() throws Exception {
        List<Kolo> ranks = ranks(3);
        Map<String, BiFunction<Integer, Kolo, Tensor>> cases = new TreeMap<>();
        cases.put("shape", (r, k) -> k.allreduce("m.shape", Tensor.allocate(DType.FLOAT32, r == 2 ? 5 : 4), ReduceOp.SUM));
        cases.put("dtype", (r, k) -> k.allreduce("m.dtype", Tensor.allocate(r == 0 ? DType.FLOAT64 : DType.FLOAT32, 4),
                ReduceOp.SUM));
        cases.put("reduce op", (r, k) -> k.allreduce("m.op", Tensor.allocate(DType.FLOAT32, 4),
                r == 1 ? ReduceOp.MAX : ReduceOp.SUM));
        cases.put("root rank", (r, k) -> k.broadcast("m.root", Tensor.allocate(DType.FLOAT32, 4), r == 1 ? 1 : 0));
        cases.put("prescale", (r, k) -> k.allreduce("m.scale", Tensor.allocate(DType.FLOAT32, 4), ReduceOp.SUM,
                r == 0 ? 2.0 : 1.0, 1.0));
        for (Map.Entry<String, BiFunction<Integer, Kolo, Tensor>> c : cases.entrySet()) {
            List<String> errors = onAll(ranks, (r, k) -> {
                try {
                    c.getValue().apply(r, k);
                    return "no error";
                } catch (CollectiveMismatchException e) {
                    return e.getMessage();
                }
            });
            for (String e : errors) {
                assertTrue(e.contains(c.getKey() + " differs"), c.getKey() + ": " + e);
            }
            List<Tensor> next = onAll(ranks, (r, k) -> k.allreduce("after." + c.getKey(),
                    Tensor.of(new float[] {1f}, 1), ReduceOp.SUM));
            assertEquals(3f, next.get(0).toFloatArray()[0]);
        }
    }
}
