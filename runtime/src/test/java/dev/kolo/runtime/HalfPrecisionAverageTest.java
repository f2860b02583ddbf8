package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * AVERAGE of large half-precision values on a real 4-rank cluster: the sum of four values near 40000 is above
 * fp16's largest finite value (65504), so a division after the sum would give infinity; the result must equal
 * the fp32 average within the half type's precision, on the eager path (small tensors, data in the agreement
 * round) and the ring (large ones).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HalfPrecisionAverageTest {
    private static final int RANKS = 4;
    private LocalJob job;

    @BeforeAll
    void start() {
        job = LocalJob.start(RANKS);
    }

    @AfterAll
    void close() {
        job.close();
    }

    @ParameterizedTest(name = "{0} AVERAGE of {1} values near 40000")
    @CsvSource({"FLOAT16, 8", "FLOAT16, 100000", "BFLOAT16, 8", "BFLOAT16, 100000"})
    void averageOfLargeValuesStaysFinite(DType dtype, int length) throws Exception {
        String name = "avg." + dtype + "." + length;
        List<Tensor> results = job.onAll(k -> k.allreduce(name, Tensor.of(dtype, inputs(k.rank(), length), length),
                ReduceOp.AVERAGE));
        // The expected average in fp32 of the values as the half type holds them (the inputs' own rounding
        // is not the reduction's error).
        float[] expected = new float[length];
        for (int r = 0; r < RANKS; r++) {
            float[] held = Tensor.of(dtype, inputs(r, length), length).toFloatArray();
            for (int i = 0; i < length; i++) {
                expected[i] += held[i] / RANKS;
            }
        }
        double eps = dtype == DType.FLOAT16 ? 0x1p-11 : 0x1p-8;
        CollectiveMatrixTest.assertSameBytes(results);
        float[] got = results.get(0).toFloatArray();
        for (int i = 0; i < length; i++) {
            assertTrue(Float.isFinite(got[i]), dtype + " element " + i + " overflowed to " + got[i]);
            // One rounding per prescale, per ring step and for the result, relative to the average.
            double tolerance = eps * (RANKS + 2) * expected[i];
            assertEquals(expected[i], got[i], tolerance, dtype + " element " + i);
        }
    }

    /** Values from 38000 to about 42000, different on every rank and element. */
    private static float[] inputs(int rank, int length) {
        float[] v = new float[length];
        for (int i = 0; i < length; i++) {
            v[i] = 38000f + 1000f * rank + (i % 1000);
        }
        return v;
    }
}
