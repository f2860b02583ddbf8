package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** A job of one takes the fast path, with the same semantics and errors as a ring. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SingleRankCollectivesTest {
    private LocalJob job;
    private Kolo kolo;

    @BeforeAll
    void start() {
        job = LocalJob.start(1);
        kolo = job.workers.get(0);
    }

    @AfterAll
    void stop() {
        job.close();
    }

    @Test
    void allreduceReturnsANewScaledTensorAndLeavesTheInput() {
        Tensor in = Tensor.of(new float[] {1, 2, 3}, 3);
        Tensor out = kolo.allreduce("x", in, ReduceOp.SUM, 2.0, 0.5);
        assertArrayEquals(new float[] {1, 2, 3}, out.toFloatArray());
        assertArrayEquals(new float[] {1, 2, 3}, in.toFloatArray());
        assertArrayEquals(new int[] {3}, kolo.allreduce("i", Tensor.of(new int[] {7}, 1), ReduceOp.SUM, 0.5, 1)
                .toIntArray(), "integers scale in double and truncate");
        assertArrayEquals(new float[] {4}, kolo.allreduce("avg", Tensor.of(new float[] {4}), ReduceOp.AVERAGE)
                .toFloatArray());
    }

    @Test
    void otherCollectivesOfOne() {
        Tensor t = Tensor.of(new double[] {1, 2, 3, 4}, 2, 2);
        assertArrayEquals(t.toDoubleArray(), kolo.allgather("g", t).toDoubleArray());
        assertArrayEquals(t.toDoubleArray(), kolo.broadcast("b", t, 0).toDoubleArray());
        assertArrayEquals(t.toDoubleArray(), kolo.reducescatter("r", t, ReduceOp.SUM).toDoubleArray());
        assertArrayEquals(t.toDoubleArray(), kolo.alltoall("a", t, null).toDoubleArray());
        assertEquals(0, kolo.join());
        List<Tensor> grouped = kolo.groupedAllreduce("grp", List.of(Tensor.of(new float[] {1}), Tensor.of(new float[] {2})),
                ReduceOp.SUM);
        assertEquals(2.0f, grouped.get(1).toFloatArray()[0]);
    }

    @Test
    void badArgumentsAreRejectedAtOnce() {
        Tensor scalar = Tensor.of(new float[] {1});
        assertThrows(IllegalArgumentException.class, () -> kolo.allgather("s", scalar));
        assertThrows(IllegalArgumentException.class, () -> kolo.broadcast("b", scalar, 1));
        assertThrows(IllegalArgumentException.class, () -> kolo.allreduce("", scalar, ReduceOp.SUM));
        assertThrows(IllegalArgumentException.class,
                () -> kolo.alltoall("a", Tensor.of(new float[] {1, 2}, 2), new int[] {3}));
    }

    @Test
    void nameInFlightIsRejectedAndFreedOnCompletion() throws Exception {
        // Submit many async ops under distinct names, then one duplicate while the first is surely queued.
        Tensor big = Tensor.allocate(DType.FLOAT32, 1 << 20);
        CompletableFuture<Tensor> first = kolo.allreduceAsync("dup", big, ReduceOp.SUM, 3.0, 1.0);
        IllegalArgumentException e = null;
        CompletableFuture<Tensor> second = null;
        try {
            second = kolo.allreduceAsync("dup", big, ReduceOp.SUM);
        } catch (IllegalArgumentException expected) {
            e = expected;
        }
        first.get(10, TimeUnit.SECONDS);
        if (second != null) {
            second.get(10, TimeUnit.SECONDS); // the first had completed already (a slow machine): let this one finish
        }
        if (e != null) {
            assertTrue(e.getMessage().contains("already in flight"), e.getMessage());
        }
        // Once complete, the name may be used again with another shape and dtype.
        assertEquals(DType.INT64, kolo.allreduce("dup", Tensor.of(new long[] {1, 2}, 2), ReduceOp.MAX).dtype());
    }
}
