package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.kernels.ReductionOp;
import dev.kolo.kernels.testing.Reference;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every collective against a double-precision sequential reference, on rings of 1 to 5 ranks formed once
 * for the class, over one transport ({@link RingCollectivesOverTcpTest}, {@link RingCollectivesOverSharedMemoryTest}).
 * Small 16 KiB chunks so that modest lengths already exercise the pipeline.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
abstract class RingCollectivesTest {
    /** The element-wise ops; Adasum has its own reference ({@link AdasumAllreduceTest}). */
    private static final java.util.List<ReduceOp> ELEMENT_WISE = java.util.Arrays.stream(ReduceOp.values())
            .filter(op -> op != ReduceOp.ADASUM).toList();
    static final int MAX_SIZE = 5;
    private final List<TestRings> clusters = new ArrayList<>();

    /** @return the options every rank's data plane gets (16 KiB chunks, and the transport under test) */
    abstract TransportOptions.Builder options();

    /** @return the transport every ring of 2 or more ranks must report ({@code DataPlane.transport()}) */
    abstract String transport();

    @BeforeAll
    void formRings() throws Exception {
        TransportOptions options = options().chunkBytes(16 * 1024).build();
        for (int n = 1; n <= MAX_SIZE; n++) {
            clusters.add(TestRings.formed(n, options));
        }
    }

    @Test
    void everyRingRunsOverTheTransportUnderTest() {
        for (int n = 2; n <= MAX_SIZE; n++) {
            for (GenerationDataPlane r : ring(n).rings) {
                assertEquals(transport(), r.transport(), "np " + n + " rank " + r.rank());
            }
        }
    }

    @AfterAll
    void closeRings() {
        clusters.forEach(TestRings::close);
    }

    private TestRings ring(int n) {
        return clusters.get(n - 1);
    }

    static Stream<Arguments> sizesAndTypes() {
        return IntStream.rangeClosed(1, MAX_SIZE).boxed()
                .flatMap(n -> Stream.of(DType.values()).map(t -> Arguments.of(n, t)));
    }

    /** Deterministic input: small integers for floats (exact sums), full-range values for integers. */
    static double input(DType t, ReduceOp op, int rank, int i) {
        long h = mix(rank * 1_000_003L + i * 31L + t.ordinal() * 7L + op.ordinal() * 131L);
        if (t.isFloatingPoint()) {
            return op == ReduceOp.PRODUCT ? Math.floorMod(h, 7) - 3 : Math.floorMod(h, 17) - 8;
        }
        return h;
    }

    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb3fe1a85ec53L;
        return x ^ (x >>> 33);
    }

    record Case(ReduceOp op, int count, double prescale, double postscale) {
    }

    @ParameterizedTest(name = "allreduce np={0} {1}")
    @MethodSource("sizesAndTypes")
    void allreduceEveryTypeAndOpMatchesTheReference(int n, DType t) throws Exception {
        List<Case> cases = new ArrayList<>();
        // With the default table: up to 7n+3 elements takes the direct path (<= 8 KiB) or recursive doubling;
        // 9001 elements is over 8 KiB for every type, so it takes the ring at 2 ranks and recursive doubling or
        // Rabenseifner's algorithm beyond (AllreduceAlgorithmsTest forces each algorithm).
        int[] lengths = IntStream.of(0, 1, n - 1, 7 * n + 3, 9_001).distinct().toArray();
        for (ReduceOp op : ELEMENT_WISE) {
            for (int len : lengths) {
                cases.add(new Case(op, len, 1.0, 1.0));
            }
        }
        for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVERAGE, ReduceOp.MAX}) {
            cases.add(new Case(op, 7 * n + 3, 0.5, 3.0));
            cases.add(new Case(op, 9_001, 0.25, 1.5));
        }
        TestRings c = ring(n);
        long base = c.reserve(cases.size());
        List<List<byte[]>> results = c.onAll((rank, ring) -> {
            ByteBuffer buf = Elements.direct(9_001 * 8);
            List<byte[]> out = new ArrayList<>();
            for (int k = 0; k < cases.size(); k++) {
                Case cs = cases.get(k);
                for (int i = 0; i < cs.count(); i++) {
                    Elements.put(t, buf, i, input(t, cs.op(), rank, i));
                }
                ring.allreduce(base + k, buf, t, cs.count(), cs.op(), cs.prescale(), cs.postscale());
                out.add(Elements.bytes(buf, 0, cs.count() * t.byteSize()));
            }
            return out;
        }, 60);
        for (int k = 0; k < cases.size(); k++) {
            Case cs = cases.get(k);
            byte[] r0 = results.get(0).get(k);
            for (int r = 1; r < n; r++) {
                assertArrayEquals(r0, results.get(r).get(k), "ranks 0 and " + r + " differ for " + cs);
            }
            checkAgainstReference(n, t, cs, ByteBuffer.wrap(r0).order(java.nio.ByteOrder.LITTLE_ENDIAN), 0, 0, cs.count());
        }
    }

    @ParameterizedTest(name = "segmented allreduce np={0} {1}")
    @MethodSource("sizesAndTypes")
    void anAllreduceOverSegmentsEqualsTheSameOverOneBuffer(int n, DType t) throws Exception {
        // Segments of many sizes (empty ones, a lone element, some not divisible by the ring size, one larger
        // than a chunk) so that frames, reductions and scalings cut across segment bounds everywhere.
        int[] lengths = {0, 5, 1, 0, 3000, 7 * n + 3, 9_001, 0, 17, 2};
        int total = IntStream.of(lengths).sum();
        TestRings c = ring(n);
        for (Case cs : List.of(new Case(ReduceOp.SUM, total, 1.0, 1.0), new Case(ReduceOp.AVERAGE, total, 0.5, 3.0),
                new Case(ReduceOp.MAX, total, 1.0, 2.0))) {
            long base = c.reserve(2);
            List<byte[][]> results = c.onAll((rank, ring) -> {
                ByteBuffer whole = Elements.direct(total * t.byteSize());
                ByteBuffer[] send = new ByteBuffer[lengths.length];
                ByteBuffer[] views = new ByteBuffer[lengths.length];
                int[] bytes = new int[lengths.length];
                for (int s = 0, at = 0; s < lengths.length; at += lengths[s], s++) {
                    ByteBuffer seg = Elements.direct(Math.max(1, lengths[s]) * t.byteSize());
                    for (int i = 0; i < lengths[s]; i++) {
                        Elements.put(t, seg, i, input(t, cs.op(), rank, at + i));
                        Elements.put(t, whole, at + i, input(t, cs.op(), rank, at + i));
                    }
                    send[s] = seg.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
                    views[s] = seg.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
                    bytes[s] = lengths[s] * t.byteSize();
                }
                ring.allreduce(base, whole, t, total, cs.op(), cs.prescale(), cs.postscale());
                ring.allreduce(base + 1, send, views, bytes, lengths.length, t, cs.op(), cs.prescale(),
                        cs.postscale());
                ByteBuffer joined = Elements.direct(total * t.byteSize());
                for (int s = 0, at = 0; s < lengths.length; at += bytes[s], s++) {
                    joined.put(at, views[s].clear(), 0, bytes[s]);
                }
                return new byte[][] {Elements.bytes(whole, 0, total * t.byteSize()),
                        Elements.bytes(joined, 0, total * t.byteSize())};
            }, 60);
            for (int r = 0; r < n; r++) {
                assertArrayEquals(results.get(r)[0], results.get(r)[1], "rank " + r + ": segments differ from one "
                        + "buffer for " + cs);
                assertArrayEquals(results.get(0)[1], results.get(r)[1], "ranks 0 and " + r + " differ for " + cs);
            }
        }
    }

    /** Checks elements [from, from + count) of the result (at element offset {@code at}) against the reference. */
    static void checkAgainstReference(int n, DType t, Case cs, ByteBuffer result, int at, int from, int count) {
        ByteBuffer one = Elements.direct(8);
        double finalScale = cs.op() == ReduceOp.AVERAGE ? cs.postscale() / n : cs.postscale();
        for (int i = from; i < from + count; i++) {
            if (t.isFloatingPoint()) {
                double acc = 0;
                for (int r = 0; r < n; r++) {
                    Elements.put(t, one, 0, input(t, cs.op(), r, i));
                    double v = Elements.get(t, one, 0) * cs.prescale();
                    acc = r == 0 ? v : Reference.op(reduction(cs.op()), acc, v);
                }
                double expected = acc * finalScale;
                double actual = Elements.get(t, result, i - from + at);
                double tol = switch (t) {
                    case FLOAT16 -> 5e-3;
                    case BFLOAT16 -> 4e-2;
                    case FLOAT32 -> 1e-6;
                    default -> 1e-12;
                } * Math.max(1, Math.abs(expected));
                if (Math.abs(actual - expected) > tol) {
                    throw new AssertionError(t + " " + cs + " element " + i + ": expected " + expected + " got " + actual);
                }
            } else {
                long acc = 0;
                for (int r = 0; r < n; r++) {
                    Elements.put(t, one, 0, input(t, cs.op(), r, i));
                    long v = Elements.getLong(t, one, 0);
                    if (cs.prescale() != 1.0) {
                        v = Elements.scaled(t, v, cs.prescale());
                    }
                    acc = r == 0 ? v : Elements.wrap(t, Reference.op(reduction(cs.op()), acc, v));
                }
                long expected = finalScale == 1.0 ? acc : Elements.scaled(t, acc, finalScale);
                long actual = Elements.getLong(t, result, i - from + at);
                if (actual != expected) { // no eager message: this runs for millions of elements
                    throw new AssertionError(t + " " + cs + " element " + i + ": expected " + expected + " got " + actual);
                }
            }
        }
    }

    /** The kernels' reduction for a collective's op: AVERAGE sums, and the caller scales. */
    static ReductionOp reduction(ReduceOp op) {
        return op == ReduceOp.AVERAGE ? ReductionOp.SUM : ReductionOp.valueOf(op.name());
    }


    @Test
    void minAndMaxPropagateNaN() throws Exception {
        for (DType t : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.MIN, ReduceOp.MAX}) {
                TestRings c = ring(3);
                long seq = c.nextSeq();
                List<byte[]> out = c.onAll((rank, ring) -> {
                    ByteBuffer buf = Elements.direct(100 * 8);
                    for (int i = 0; i < 100; i++) {
                        Elements.put(t, buf, i, (rank == 1 && i % 10 == 3) ? Double.NaN : i - rank);
                    }
                    ring.allreduce(seq, buf, t, 100, op, 1.0, 1.0);
                    return Elements.bytes(buf, 0, 100 * t.byteSize());
                }, 30);
                ByteBuffer r = ByteBuffer.wrap(out.get(0)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < 100; i++) {
                    double v = Elements.get(t, r, i);
                    if (i % 10 == 3) {
                        assertTrue(Double.isNaN(v), t + " " + op + " element " + i + " should be NaN");
                    } else {
                        assertEquals(op == ReduceOp.MIN ? i - 2 : i, v, 0.0, t + " " + op + " element " + i);
                    }
                }
                assertArrayEquals(out.get(0), out.get(2));
            }
        }
    }

    @Test
    @Timeout(60)
    void largeFloat32AllreduceIsExactAndIdenticalOnEveryRank() throws Exception {
        int count = 4 << 20; // 16 MiB
        for (int n : new int[] {2, 3, 4, 5}) {
            TestRings c = ring(n);
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, ring) -> {
                ByteBuffer buf = Elements.direct(count * 4);
                for (int i = 0; i < count; i++) {
                    buf.putFloat(i * 4, (float) ((i % 1000) + rank));
                }
                ring.allreduce(seq, buf, DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
                return Elements.bytes(buf, 0, count * 4);
            }, 60);
            ByteBuffer r = ByteBuffer.wrap(out.get(0)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < count; i += 997) {
                assertEquals(n * (i % 1000) + n * (n - 1) / 2, r.getFloat(i * 4), 0.0f, "np " + n + " element " + i);
            }
            for (int rank = 1; rank < n; rank++) {
                assertArrayEquals(out.get(0), out.get(rank), "np " + n + ": ranks 0 and " + rank + " differ");
            }
        }
    }

    @ParameterizedTest(name = "allgather np={0}")
    @MethodSource("sizes")
    void allgatherConcatenatesVariableRowsInRankOrder(int n) throws Exception {
        int[][] rowSets = {{17, 32, 81, 12, 15}, {0, 5, 0, 1, 3}, {40_000, 1, 70_000, 0, 9}};
        int rowBytes = 12; // 3 float32 per row
        TestRings c = ring(n);
        for (int[] rows : rowSets) {
            int[] bytes = new int[n];
            int total = 0;
            for (int r = 0; r < n; r++) {
                bytes[r] = rows[r] * rowBytes;
                total += bytes[r];
            }
            int totalBytes = total;
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, ring) -> {
                ByteBuffer buf = Elements.direct(totalBytes);
                int off = 0;
                for (int r = 0; r < rank; r++) {
                    off += bytes[r];
                }
                for (int i = 0; i < bytes[rank]; i++) {
                    buf.put(off + i, (byte) (rank * 37 + i));
                }
                ring.allgather(seq, buf, bytes);
                return Elements.bytes(buf, 0, totalBytes);
            }, 30);
            byte[] expected = new byte[totalBytes];
            int off = 0;
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < bytes[r]; i++) {
                    expected[off + i] = (byte) (r * 37 + i);
                }
                off += bytes[r];
            }
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, out.get(r), "np " + n + " rank " + r);
            }
        }
    }

    static IntStream sizes() {
        return IntStream.rangeClosed(1, MAX_SIZE);
    }

    @ParameterizedTest(name = "broadcast np={0}")
    @MethodSource("sizes")
    void broadcastFromEveryRoot(int n) throws Exception {
        TestRings c = ring(n);
        for (int root = 0; root < n; root++) {
            for (int len : new int[] {0, 1, 1_000_003}) {
                int rt = root;
                long seq = c.nextSeq();
                List<byte[]> out = c.onAll((rank, ring) -> {
                    ByteBuffer buf = Elements.direct(len);
                    for (int i = 0; i < len; i++) {
                        buf.put(i, (byte) (rank == rt ? i * 7 + rt : -1));
                    }
                    ring.broadcast(seq, buf, len, rt);
                    return Elements.bytes(buf, 0, len);
                }, 30);
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(out.get(rt), out.get(r), "np " + n + " root " + rt + " rank " + r + " len " + len);
                }
                for (int i = 0; i < len; i += 101) {
                    assertEquals((byte) (i * 7 + rt), out.get(rt)[i]);
                }
            }
        }
    }

    @ParameterizedTest(name = "reducescatter np={0}")
    @MethodSource("sizes")
    void reducescatterGivesEachRankItsUnevenBlock(int n) throws Exception {
        TestRings c = ring(n);
        int rowElements = 5;
        Object[][] specs = {
            {DType.FLOAT32, ReduceOp.SUM, 2L * n + 3, 1.0, 1.0},
            {DType.INT32, ReduceOp.AVERAGE, 3L * n + 1, 1.0, 1.0},
            {DType.FLOAT64, ReduceOp.MAX, (long) Math.max(0, n - 1), 1.0, 1.0},
            {DType.FLOAT16, ReduceOp.SUM, 1000L * n + n - 1, 0.5, 2.0},
            {DType.INT64, ReduceOp.PRODUCT, 7L, 1.0, 1.0},
        };
        for (Object[] spec : specs) {
            DType t = (DType) spec[0];
            ReduceOp op = (ReduceOp) spec[1];
            long rows = (long) spec[2];
            Case cs = new Case(op, 0, (double) spec[3], (double) spec[4]);
            int[] counts = RegionChecks.reducescatterCounts(rows, rowElements, n);
            for (int r = 0; r < n; r++) {
                assertEquals((rows / n + (r < rows % n ? 1 : 0)) * rowElements, counts[r]);
            }
            int total = (int) (rows * rowElements);
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, ring) -> {
                ByteBuffer buf = Elements.direct(total * t.byteSize());
                for (int i = 0; i < total; i++) {
                    Elements.put(t, buf, i, input(t, op, rank, i));
                }
                ring.reducescatter(seq, buf, t, counts, op, cs.prescale(), cs.postscale());
                int start = 0;
                for (int r = 0; r < rank; r++) {
                    start += counts[r];
                }
                return Elements.bytes(buf, start * t.byteSize(), counts[rank] * t.byteSize());
            }, 30);
            int start = 0;
            for (int r = 0; r < n; r++) {
                ByteBuffer mine = ByteBuffer.wrap(out.get(r)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                checkAgainstReference(n, t, cs, mine, 0, start, counts[r]);
                start += counts[r];
            }
        }
    }

    @ParameterizedTest(name = "alltoall np={0}")
    @MethodSource("sizes")
    void alltoallWithUnevenSplitsIncludingZero(int n) throws Exception {
        TestRings c = ring(n);
        for (int rowBytes : new int[] {8, 24_000}) {
            int[][] split = new int[n][n]; // rows rank r sends to rank j
            for (int r = 0; r < n; r++) {
                for (int j = 0; j < n; j++) {
                    split[r][j] = (r * 3 + j * 5 + 1) % 4;
                }
            }
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, ring) -> {
                int[] sendBytes = new int[n];
                int[] recvBytes = new int[n];
                for (int j = 0; j < n; j++) {
                    sendBytes[j] = split[rank][j] * rowBytes;
                    recvBytes[j] = split[j][rank] * rowBytes;
                }
                int sendTotal = IntStream.of(sendBytes).sum();
                int recvTotal = IntStream.of(recvBytes).sum();
                ByteBuffer send = Elements.direct(sendTotal);
                ByteBuffer recv = Elements.direct(recvTotal);
                int off = 0;
                for (int j = 0; j < n; j++) {
                    for (int i = 0; i < sendBytes[j]; i++) {
                        send.put(off + i, (byte) (rank * 31 + j * 7 + i));
                    }
                    off += sendBytes[j];
                }
                ring.alltoall(seq, send, sendBytes, recv, recvBytes);
                return Elements.bytes(recv, 0, recvTotal);
            }, 30);
            for (int r = 0; r < n; r++) {
                int off = 0;
                for (int j = 0; j < n; j++) {
                    int len = split[j][r] * rowBytes;
                    for (int i = 0; i < len; i++) {
                        assertEquals((byte) (j * 31 + r * 7 + i), out.get(r)[off + i],
                                "np " + n + " rank " + r + " from " + j + " byte " + i);
                    }
                    off += len;
                }
            }
        }
    }

    @Test
    void steadyStateOpsAllocateNothing() throws Exception {
        TestRings c = ring(3);
        int ops = 300;
        long base = c.reserve(2 * ops);
        List<Long> allocated = c.onAll((rank, ring) -> {
            com.sun.management.ThreadMXBean mx =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            ByteBuffer buf = Elements.direct(256 * 1024);
            long tid = Thread.currentThread().getId();
            for (int k = 0; k < ops; k++) { // warm up: JIT, thread-local I/O vectors, cached views
                ring.allreduce(base + k, buf, DType.FLOAT32, 64 * 1024, ReduceOp.SUM, 1.0, 1.0);
            }
            long before = mx.getThreadAllocatedBytes(tid);
            for (int k = ops; k < 2 * ops; k++) {
                ring.allreduce(base + k, buf, DType.FLOAT32, 64 * 1024, ReduceOp.SUM, 1.0, 1.0);
            }
            return mx.getThreadAllocatedBytes(tid) - before;
        }, 60);
        for (long bytes : allocated) {
            assertTrue(bytes < 16L * ops, "allocated " + bytes + " bytes over " + ops + " ops: " + allocated);
        }
    }
}
