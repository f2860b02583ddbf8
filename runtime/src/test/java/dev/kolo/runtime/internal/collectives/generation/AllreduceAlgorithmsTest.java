package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms.Choice;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.collectives.generation.RingCollectivesTest.Case;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * Each allreduce algorithm forced on its own (and allgather and broadcast by their log-step algorithms and by the
 * ring), against the double-precision reference, on jobs of 1 to 9 ranks
 * (powers of two and not, so the fold and unfold of the log-step algorithms run), every dtype and op, sizes 0, 1,
 * fewer elements than ranks, odd ones and several chunks; and the default table around its thresholds. The ranks
 * must end with the same bytes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class AllreduceAlgorithmsTest {
    /** The element-wise ops; Adasum has its own reference ({@link AdasumAllreduceTest}). */
    private static final java.util.List<ReduceOp> ELEMENT_WISE = java.util.Arrays.stream(ReduceOp.values())
            .filter(op -> op != ReduceOp.ADASUM).toList();
    static final int MAX_SIZE = 9;
    private static final int CHUNK = 16 * 1024;
    private final List<TestRings> clusters = new ArrayList<>();

    @BeforeAll
    void formRings() throws Exception {
        TransportOptions options = TransportOptions.builder().chunkBytes(CHUNK).build();
        for (int n = 1; n <= MAX_SIZE; n++) {
            clusters.add(TestRings.formed(n, options));
        }
    }

    @AfterAll
    void closeRings() {
        clusters.forEach(TestRings::close);
    }

    /** A table that sends every buffer it can through {@code algorithm} (the ring takes what it cannot). */
    static AllreduceAlgorithms only(Choice algorithm) {
        return switch (algorithm) {
            case DIRECT -> AllreduceAlgorithms.of(AllreduceAlgorithms.DIRECT_MAX_BYTES, Integer.MAX_VALUE, 0, 0);
            case RECURSIVE_DOUBLING -> AllreduceAlgorithms.of(0, 0, 1 << 20, 0);
            case RABENSEIFNER -> AllreduceAlgorithms.of(0, 0, 0, Long.MAX_VALUE);
            case RING -> AllreduceAlgorithms.of(0, 0, 0, 0);
        };
    }

    /** The formed job of {@code n}, its links driven by rings with the given table (the links are shared). */
    private List<GenerationDataPlane> rings(int n, AllreduceAlgorithms table) {
        return rings(n, table, dev.kolo.kernels.Kernels.java());
    }

    private List<GenerationDataPlane> rings(int n, AllreduceAlgorithms table, dev.kolo.kernels.Kernels kernels) {
        TestRings c = clusters.get(n - 1);
        List<GenerationDataPlane> out = new ArrayList<>();
        for (GenerationDataPlane r : c.rings) {
            out.add(new GenerationDataPlane(r.links(), new KernelReducer(kernels), CHUNK, table));
        }
        return out;
    }

    static Stream<Arguments> algorithmsSizesAndTypes() {
        return Stream.of(Choice.RECURSIVE_DOUBLING, Choice.RABENSEIFNER, Choice.DIRECT, Choice.RING)
                .flatMap(a -> IntStream.rangeClosed(1, MAX_SIZE).boxed()
                        .flatMap(n -> Stream.of(DType.values()).map(t -> Arguments.of(a, n, t))));
    }

    @ParameterizedTest(name = "{0} np={1} {2}")
    @MethodSource("algorithmsSizesAndTypes")
    void everyAlgorithmMatchesTheReferenceForEveryTypeOpAndOddSize(Choice algorithm, int n, DType t)
            throws Exception {
        int large = algorithm == Choice.DIRECT ? AllreduceAlgorithms.DIRECT_MAX_BYTES / t.byteSize()
                : 3 * CHUNK / t.byteSize() + 7; // several chunks in a step, not a multiple of anything
        int[] lengths = IntStream.of(0, 1, n - 1, n + 1, 7 * n + 3, 1001, large).distinct().toArray();
        List<Case> cases = new ArrayList<>();
        for (ReduceOp op : ELEMENT_WISE) {
            for (int len : lengths) {
                cases.add(new Case(op, len, 1.0, 1.0));
            }
        }
        for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVERAGE, ReduceOp.MAX}) {
            cases.add(new Case(op, 7 * n + 3, 0.5, 3.0));
            cases.add(new Case(op, large, 0.25, 1.5));
        }
        run(n, only(algorithm), t, cases, algorithm + " ");
    }

    /** The default table, 1 element below, at and above each of its thresholds, float32 SUM and AVERAGE. */
    @ParameterizedTest(name = "default table np={0}")
    @MethodSource("sizes")
    void theDefaultTableIsRightAroundItsThresholds(int n) throws Exception {
        List<Case> cases = new ArrayList<>();
        for (long threshold : new long[] {AllreduceAlgorithms.DIRECT_MAX_BYTES,
                AllreduceAlgorithms.RECURSIVE_DOUBLING_MAX_BYTES, AllreduceAlgorithms.RABENSEIFNER_MAX_BYTES}) {
            for (int delta = -1; delta <= 1; delta++) {
                cases.add(new Case(ReduceOp.SUM, (int) (threshold / 4) + delta, 1.0, 1.0));
                cases.add(new Case(ReduceOp.AVERAGE, (int) (threshold / 4) + delta, 1.0, 1.0));
            }
        }
        run(n, AllreduceAlgorithms.defaults(), DType.FLOAT32, cases, "default ");
    }

    static Stream<Integer> sizes() {
        return IntStream.rangeClosed(2, MAX_SIZE).boxed();
    }

    private void run(int n, AllreduceAlgorithms table, DType t, List<Case> cases, String what) throws Exception {
        TestRings c = clusters.get(n - 1);
        List<GenerationDataPlane> rings = rings(n, table);
        int maxCount = cases.stream().mapToInt(Case::count).max().orElse(0);
        long base = c.reserve(cases.size());
        List<List<byte[]>> results = c.onAll((rank, unused) -> {
            GenerationDataPlane ring = rings.get(rank);
            ByteBuffer buf = Elements.direct(Math.max(1, maxCount) * 8 + 16);
            List<byte[]> out = new ArrayList<>();
            for (int k = 0; k < cases.size(); k++) {
                Case cs = cases.get(k);
                int offset = 8 * (k % 2); // an offset into the buffer, as a fusion buffer's tensors have
                for (int i = 0; i < cs.count(); i++) {
                    Elements.put(t, buf, offset / t.byteSize() + i, RingCollectivesTest.input(t, cs.op(), rank, i));
                }
                ring.allreduce(base + k, buf, offset, cs.count(), t, cs.op(), cs.prescale(), cs.postscale());
                out.add(Elements.bytes(buf, offset, cs.count() * t.byteSize()));
            }
            return out;
        }, 120);
        for (int k = 0; k < cases.size(); k++) {
            Case cs = cases.get(k);
            byte[] r0 = results.get(0).get(k);
            for (int r = 1; r < n; r++) {
                assertArrayEquals(r0, results.get(r).get(k), what + "np " + n + ": ranks 0 and " + r + " differ for " + cs);
            }
            RingCollectivesTest.checkAgainstReference(n, t, cs, ByteBuffer.wrap(r0).order(ByteOrder.LITTLE_ENDIAN), 0,
                    0, cs.count());
        }
    }

    /**
     * Partners combine as lower op upper: a MAX of +0 and -0, and of NaNs with different payloads (the kernels
     * keep the first operand's NaN, so {@code a op b} and {@code b op a} differ there), agrees on every rank.
     */
    @Test
    void recursiveDoublingGivesEveryRankTheSameBytesForSignedZerosAndNaNPayloads() throws Exception {
        for (int n : new int[] {3, 4, 5, 8}) {
            TestRings c = clusters.get(n - 1);
            List<GenerationDataPlane> rings = rings(n, only(Choice.RECURSIVE_DOUBLING), dev.kolo.kernels.Kernels.get());
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, unused) -> {
                ByteBuffer buf = Elements.direct(64 * 4);
                for (int i = 0; i < 64; i++) {
                    if (i < 32) {
                        buf.putFloat(4 * i, ((rank + i) % 2 == 0) ? 0.0f : -0.0f);
                    } else {
                        buf.putInt(4 * i, 0x7fc00000 | (rank + 1)); // NaNs whose payloads name the rank
                    }
                }
                rings.get(rank).allreduce(seq, buf, 0, 64, DType.FLOAT32, ReduceOp.MAX, 1.0, 1.0);
                return Elements.bytes(buf, 0, 64 * 4);
            }, 30);
            for (int r = 1; r < n; r++) {
                assertArrayEquals(out.get(0), out.get(r), "np " + n + ": ranks 0 and " + r + " differ");
            }
        }
    }

    static Stream<Arguments> logStepOrNotAndSizes() {
        return Stream.of(true, false).flatMap(log -> IntStream.rangeClosed(1, MAX_SIZE).mapToObj(n -> Arguments.of(log, n)));
    }

    /** Allgather by recursive doubling (forced) and by the ring: blocks of any size, zeros, several chunks. */
    @ParameterizedTest(name = "allgather recursive doubling={0} np={1}")
    @MethodSource("logStepOrNotAndSizes")
    void allgatherConcatenatesEveryRanksBlockInRankOrder(boolean recursiveDoubling, int n) throws Exception {
        List<GenerationDataPlane> rings = rings(n, recursiveDoubling ? AllreduceAlgorithms.of(0, 0, 0, Long.MAX_VALUE)
                : AllreduceAlgorithms.of(0, 0, 0, 0));
        TestRings c = clusters.get(n - 1);
        for (int pattern = 0; pattern < 3; pattern++) {
            int[] bytes = new int[n];
            int total = 0;
            for (int r = 0; r < n; r++) {
                bytes[r] = switch (pattern) {
                    case 0 -> r % 3 == 1 ? 0 : 1 + r; // tiny, some empty
                    case 1 -> 3 * CHUNK + 7 * r; // several chunks each, uneven
                    default -> r == n - 1 ? 2 * CHUNK + 1 : 0; // all of it on the last rank
                };
                total += bytes[r];
            }
            int totalBytes = total;
            long seq = c.nextSeq();
            List<byte[]> out = c.onAll((rank, unused) -> {
                ByteBuffer buf = Elements.direct(Math.max(1, totalBytes));
                int off = 0;
                for (int r = 0; r < rank; r++) {
                    off += bytes[r];
                }
                for (int i = 0; i < bytes[rank]; i++) {
                    buf.put(off + i, (byte) (rank * 37 + i));
                }
                rings.get(rank).allgather(seq, buf, bytes);
                return Elements.bytes(buf, 0, totalBytes);
            }, 60);
            byte[] expected = new byte[totalBytes];
            for (int r = 0, off = 0; r < n; off += bytes[r], r++) {
                for (int i = 0; i < bytes[r]; i++) {
                    expected[off + i] = (byte) (r * 37 + i);
                }
            }
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, out.get(r), "np " + n + " pattern " + pattern + " rank " + r);
            }
        }
    }

    /** Broadcast by the binomial tree (forced) and by the chain, from every root. */
    @ParameterizedTest(name = "broadcast binomial={0} np={1}")
    @MethodSource("logStepOrNotAndSizes")
    void broadcastGivesEveryRankTheRootsBytes(boolean binomial, int n) throws Exception {
        List<GenerationDataPlane> rings = rings(n, binomial ? AllreduceAlgorithms.of(0, 0, 16 << 20, 0)
                : AllreduceAlgorithms.of(0, 0, 0, 0));
        TestRings c = clusters.get(n - 1);
        for (int root = 0; root < n; root++) {
            for (int len : new int[] {0, 1, 3 * CHUNK + 5}) {
                int rt = root;
                long seq = c.nextSeq();
                List<byte[]> out = c.onAll((rank, unused) -> {
                    ByteBuffer buf = Elements.direct(Math.max(1, len + 3));
                    for (int i = 0; i < len; i++) {
                        buf.put(3 + i, (byte) (rank == rt ? i * 7 + rt : -1));
                    }
                    rings.get(rank).broadcast(seq, buf, 3, len, rt);
                    return Elements.bytes(buf, 3, len);
                }, 60);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < len; i++) {
                        if (out.get(r)[i] != (byte) (i * 7 + rt)) {
                            throw new AssertionError("np " + n + " root " + rt + " rank " + r + " len " + len
                                    + ": byte " + i + " is " + out.get(r)[i]);
                        }
                    }
                }
            }
        }
    }

    @Test
    void theTableChoosesBySizeAndJob() {
        AllreduceAlgorithms d = AllreduceAlgorithms.defaults();
        assertEquals(Choice.DIRECT, d.choose(4, 2, true));
        assertEquals(Choice.RING, d.choose(64 * 1024, 2, true));
        assertEquals(Choice.DIRECT, d.choose(4, 4, true));
        assertEquals(Choice.RECURSIVE_DOUBLING, d.choose(4, 8, true));
        assertEquals(Choice.RECURSIVE_DOUBLING, d.choose(64 * 1024, 8, true));
        assertEquals(Choice.RABENSEIFNER, d.choose(64 * 1024, 8, false));
        assertEquals(Choice.RABENSEIFNER, d.choose(1 << 20, 5, true));
        assertEquals(Choice.RING, d.choose(64L << 20, 8, true));
    }
}
