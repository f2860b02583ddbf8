package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import dev.kolo.testing.AdasumReference;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Adasum over real rings of 1 to 8 ranks (8 in one JVM) against the paper's recursive formulation computed in
 * double precision: within 1e-5 of the result's largest magnitude for float32 and float64 (half types: a few of
 * their roundings), the same bytes on every rank.
 */
@Timeout(120)
class AdasumAllreduceTest {
    /** Odd sizes, sizes below the ranks, one that splits unevenly, and one past the staging chunk. */
    private static final int[] COUNTS = {0, 1, 3, 7, 1000, 1 << 17};

    @ParameterizedTest(name = "np {0}")
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void matchesTheRecursiveFormulation(int np) throws Exception {
        try (TestRings c = TestRings.formed(np, TransportOptions.defaults())) {
            for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16}) {
                for (int count : COUNTS) {
                    check(c, dtype, count, correlated(np, count, 42 + count), 1.0, 1.0);
                }
            }
            // Scales: the prescale applies to each gradient, the postscale to the result.
            check(c, DType.FLOAT32, 1000, correlated(np, 1000, 7), 0.5, 3.0);
            // A rank with a zero gradient, and gradients that are orthogonal (disjoint supports): summed.
            double[][] sparse = new double[np][64];
            for (int r = 1; r < np; r++) {
                sparse[r][r] = r + 1;
            }
            double[] result = check(c, DType.FLOAT64, 64, sparse, 1.0, 1.0);
            for (int r = 1; r < np; r++) {
                assertEquals(r + 1, result[r], 1e-12, "orthogonal gradients add up");
            }
        }
    }

    @ParameterizedTest(name = "np {0}")
    @ValueSource(ints = {2, 4})
    void equalGradientsGiveTheirMeanNotTheirSum(int np) throws Exception {
        try (TestRings c = TestRings.formed(np, TransportOptions.defaults())) {
            double[][] same = new double[np][];
            double[] g = correlated(1, 100, 3)[0];
            for (int r = 0; r < np; r++) {
                same[r] = g;
            }
            double[] result = check(c, DType.FLOAT64, 100, same, 1.0, 1.0);
            for (int i = 0; i < 100; i++) {
                assertEquals(g[i], result[i], 1e-12);
            }
        }
    }

    @ParameterizedTest(name = "np {0}")
    @ValueSource(ints = {2})
    void otherTypesAreRefusedOnEveryRankNamingTheTypes(int np) throws Exception {
        try (TestRings c = TestRings.formed(np, TransportOptions.defaults())) {
            long seq = c.nextSeq();
            List<Throwable> errors = c.onAll((rank, ring) -> {
                ByteBuffer b = Elements.direct(8);
                return assertThrows(IllegalArgumentException.class,
                        () -> ring.allreduce(seq, b, DType.INT32, 2, ReduceOp.ADASUM));
            }, 30);
            for (Throwable e : errors) {
                assertTrue(e.getMessage().contains("floating-point") && e.getMessage().contains("INT32"),
                        e.getMessage());
            }
        }
    }

    /**
     * Runs Adasum of {@code inputs} (rank by rank) and compares with the reference.
     *
     * @return the reference
     */
    private static double[] check(TestRings c, DType dtype, int count, double[][] inputs, double prescale,
            double postscale) throws Exception {
        int np = c.size;
        long seq = c.nextSeq();
        List<ByteBuffer> out = c.onAll((rank, ring) -> {
            ByteBuffer b = Elements.direct(count * dtype.byteSize());
            for (int i = 0; i < count; i++) {
                Elements.put(dtype, b, i, inputs[rank][i]);
            }
            ring.allreduce(seq, b, dtype, count, ReduceOp.ADASUM, prescale, postscale);
            return b;
        }, 60);
        double[][] scaled = new double[np][count];
        for (int r = 0; r < np; r++) {
            for (int i = 0; i < count; i++) {
                scaled[r][i] = prescale * Elements.get(dtype, asStored(dtype, inputs[r][i]), 0);
            }
        }
        double[] expected = AdasumReference.of(scaled);
        double largest = 0;
        for (double x : expected) {
            largest = Math.max(largest, Math.abs(postscale * x));
        }
        byte[] first = Elements.bytes(out.get(0), 0, count * dtype.byteSize());
        for (int r = 0; r < np; r++) {
            assertArrayEquals(first, Elements.bytes(out.get(r), 0, count * dtype.byteSize()),
                    "rank " + r + " holds the same bytes as rank 0 (" + dtype + ", " + count + ", np " + np + ")");
        }
        double tolerance = switch (dtype) {
            case FLOAT16 -> 5e-3; // each step rounds to 11 bits
            case BFLOAT16 -> 4e-2; // 8 bits
            default -> 1e-5;
        };
        for (int i = 0; i < count; i++) {
            double got = Elements.get(dtype, out.get(0), i);
            double want = postscale * expected[i];
            assertTrue(Math.abs(got - want) <= tolerance * largest, () -> "element of " + dtype + " x" + count + " at np "
                    + np + ": " + got + " where the reference gives " + want);
        }
        return expected;
    }

    private static ByteBuffer asStored(DType dtype, double x) {
        ByteBuffer b = Elements.direct(dtype.byteSize());
        Elements.put(dtype, b, 0, x);
        return b;
    }

    /** Gradients that share a direction and differ by noise: the dot products matter. */
    private static double[][] correlated(int np, int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        double[] common = new double[count];
        for (int i = 0; i < count; i++) {
            common[i] = random.nextDouble(-1, 1);
        }
        double[][] g = new double[np][count];
        for (int r = 0; r < np; r++) {
            for (int i = 0; i < count; i++) {
                g[r][i] = common[i] * (1 + r) + random.nextDouble(-0.5, 0.5);
            }
        }
        return g;
    }
}
