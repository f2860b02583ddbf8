package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread blocked in {@code allreduce} on a tensor its peer has not submitted is interrupted: it returns at
 * once with a {@link KoloInterruptedException} and its interrupt status set, nothing spins afterwards, and the
 * op completes for the peer once it submits, after which the job goes on.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class InterruptedWaitTest {

    @Test
    void interruptedAllreduceReturnsAtOnceAndTheJobGoesOn() throws Exception {
        String name = LocalJob.uniqueName("interrupt");
        try (LocalJob job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).build())) {
            List<Kolo> byRank = job.byRank();
            job.onAll(k -> k.allreduce("warm-up", one(), ReduceOp.SUM));
            ProcessCpu.awaitQuiet(0.05, Duration.ofSeconds(30));

            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicBoolean flagKept = new AtomicBoolean();
            AtomicLong endedAt = new AtomicLong();
            CountDownLatch ended = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try {
                    byRank.get(0).allreduce("late", one(), ReduceOp.SUM);
                } catch (Throwable e) {
                    thrown.set(e);
                } finally {
                    endedAt.set(System.nanoTime());
                    flagKept.set(Thread.currentThread().isInterrupted());
                    ended.countDown();
                }
            }, "interrupted-waiter");
            waiter.start();
            awaitWaitingInKolo(waiter);

            long interruptedAt = System.nanoTime();
            waiter.interrupt();
            assertTrue(ended.await(10, TimeUnit.SECONDS), "the interrupted allreduce never returned");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(endedAt.get() - interruptedAt);
            assertTrue(tookMs < 100, "the interrupted allreduce took " + tookMs + " ms to return");
            assertInstanceOf(KoloInterruptedException.class, thrown.get());
            assertInstanceOf(InterruptedException.class, thrown.get().getCause());
            assertTrue(thrown.get().getMessage().contains("interrupted"), thrown.get().getMessage());
            assertTrue(flagKept.get(), "the interrupt status was cleared");

            // Nothing spins while the op waits for the peer: the process stays idle.
            ProcessCpu.Sample idle = ProcessCpu.firstQuietWindow(Duration.ofSeconds(2), 0.05, Duration.ofSeconds(20));
            assertTrue(idle.share() < 0.05, "while the op waits for its peer the process never went under 5% of a "
                    + "core for 2 s: " + idle);

            // The op was not withdrawn: rank 1's submit completes it, then the job goes on.
            CompletableFuture<Tensor> late = byRank.get(1).allreduceAsync("late", one(), ReduceOp.SUM);
            assertArrayEquals(new float[] {2}, late.get(20, TimeUnit.SECONDS).toFloatArray(), 0f);
            List<Tensor> after = job.onAll(k -> k.allreduce("after", one(), ReduceOp.SUM));
            for (Tensor t : after) {
                assertArrayEquals(new float[] {2}, t.toFloatArray(), 0f);
            }
        }
    }

    /** Waits until {@code t} is inside Kolo's wait for its op (its stack is in the engine's drive loop). */
    private static void awaitWaitingInKolo(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            for (StackTraceElement e : t.getStackTrace()) {
                if (e.getClassName().endsWith("CollectiveClient") && e.getMethodName().equals("drive")) {
                    return;
                }
            }
            Thread.sleep(5); // polling a condition, bounded by the deadline
        }
        assertNotNull(null, "the waiter never entered Kolo's wait");
    }

    private static Tensor one() {
        return Tensor.of(new float[] {1}, 1);
    }
}
