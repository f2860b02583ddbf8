package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kolo.testing.Conditions;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A caller that stops waiting for its op, on a real two-worker job in this JVM. Interrupted in a blocking
 * allreduce on a tensor its peer has not submitted, it returns with a {@link KoloInterruptedException} and its
 * interrupt status set, its rank's threads park while the op waits (no spin), and the op completes for the peer
 * once it submits. Whichever way it stops waiting (interrupt, a {@code get} past its timeout, {@code abandon}),
 * its tensor is never read or written afterwards: an in-place allreduce that runs later runs on a copy.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class InterruptedWaitTest {
    /** Only a guard: each wait below ends on its condition, normally at once. */
    private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static LocalJob job;
    private static List<Kolo> byRank;

    @BeforeAll
    static void form() throws Exception {
        String name = LocalJob.uniqueName("interrupt");
        job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).build());
        byRank = job.byRank();
        job.onAll(k -> k.allreduce("warm-up", one(), ReduceOp.SUM));
    }

    @AfterAll
    static void close() {
        if (job != null) {
            job.close();
        }
    }

    @Test
    void interruptedAllreduceReturnsAndTheJobGoesOn() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagKept = new AtomicBoolean();
        CountDownLatch ended = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                byRank.get(0).allreduce("late", one(), ReduceOp.SUM);
            } catch (Throwable e) {
                thrown.set(e);
            } finally {
                flagKept.set(Thread.currentThread().isInterrupted());
                ended.countDown();
            }
        }, "interrupted-waiter");
        waiter.start();
        awaitInKolosWait(waiter);
        // While it waits for its peer, the waiter parks (or waits in the data plane's selector): it does not spin.
        awaitParked(waiter);

        waiter.interrupt();
        assertTrue(ended.await(GUARD_NANOS, TimeUnit.NANOSECONDS), "the interrupted allreduce never returned");
        assertInstanceOf(KoloInterruptedException.class, thrown.get());
        assertInstanceOf(InterruptedException.class, thrown.get().getCause());
        assertTrue(thrown.get().getMessage().contains("interrupted"), thrown.get().getMessage());
        assertTrue(flagKept.get(), "the interrupt status was cleared");

        // The op still waits for rank 1; rank 0's collective thread drives it now, and parks meanwhile.
        awaitParked(collectiveThread(byRank.get(0)));

        // The op was not withdrawn: rank 1's submit completes it, then the job goes on.
        CompletableFuture<Tensor> late = byRank.get(1).allreduceAsync("late", one(), ReduceOp.SUM);
        assertArrayEquals(new float[] {2}, late.get(GUARD_NANOS, TimeUnit.NANOSECONDS).toFloatArray(), 0f);
        for (Tensor t : job.onAll(k -> k.allreduce("after", one(), ReduceOp.SUM))) {
            assertArrayEquals(new float[] {2}, t.toFloatArray(), 0f);
        }
    }

    /** The reported defect: the engine wrote the sum into the tensor of a caller that had been interrupted. */
    /**
     * Where each rank has a core of its own (two ranks in this JVM, on a machine of two or more cores), a caller
     * waiting for its peer polls for KOLO_POLL_TIME (30 ms by default) before it parks: a training step's ranks wait
     * for each other milliseconds at a time, and a parked rank wakes late where idle CPUs halt.
     */
    @Test
    void aWaitPollsForThePollTimeThenParks() throws Exception {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "needs a core for each of the two ranks");
        // Once submitted by both, the tensor is cached: the ranks agree on it on the data plane, as a training
        // step's tensors are agreed, and that wait polls (a new tensor's wait is for the coordinator's answer).
        job.onAll(k -> k.allreduce("late.polled", one(), ReduceOp.SUM));
        CompletableFuture<Tensor> late = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                late.complete(byRank.get(0).allreduce("late.polled", one(), ReduceOp.SUM));
            } catch (Throwable e) {
                late.completeExceptionally(e);
            }
        }, "polling-waiter");
        waiter.start();
        awaitInKolosWait(waiter);
        // The first and the last time the waiter is seen polling before it is seen parked: samples can only
        // narrow that span, so a poll of 1 ms cannot pass for one of 30.
        long firstPoll = 0;
        long lastPoll = 0;
        long guard = System.nanoTime() + GUARD_NANOS;
        while (System.nanoTime() - guard < 0) {
            ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(new long[] {waiter.getId()}, false,
                    false, 8)[0];
            long now = System.nanoTime();
            if (info != null && polling(info)) {
                firstPoll = firstPoll == 0 ? now : firstPoll;
                lastPoll = now;
            } else if (firstPoll != 0 && info != null && blocked(info)) {
                break;
            }
            Thread.sleep(0, 200_000); // the sampling period, not a wait for a condition
        }
        assertTrue(firstPoll != 0, "the waiter was never seen polling");
        awaitParked(waiter);
        assertEquals(2f, byRank.get(1).allreduce("late.polled", one(), ReduceOp.SUM).toFloatArray()[0]);
        assertEquals(2f, late.get(GUARD_NANOS, TimeUnit.NANOSECONDS).toFloatArray()[0]);
        long polledMillis = TimeUnit.NANOSECONDS.toMillis(lastPoll - firstPoll);
        assertTrue(polledMillis >= 10, "the waiter polled for " + polledMillis + " ms before it parked, not for "
                + "KOLO_POLL_TIME's " + Settings.POLL_TIME.defaultValue().toMillis() + " ms");
    }

    private static boolean polling(ThreadInfo info) {
        for (StackTraceElement e : info.getStackTrace()) {
            if (e.getClassName().endsWith(".IdleStrategy") && e.getMethodName().equals("poll")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void anInterruptedInPlaceAllreduceNeverWritesTheCallersTensor() throws Exception {
        Tensor mine = direct(1, 2, 3, 4);
        CountDownLatch ended = new CountDownLatch(1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                byRank.get(0).allreduceInPlace("in-place.interrupted", mine, ReduceOp.SUM);
            } catch (Throwable e) {
                thrown.set(e);
            } finally {
                ended.countDown();
            }
        }, "in-place-waiter");
        waiter.start();
        awaitInKolosWait(waiter);
        waiter.interrupt();
        assertTrue(ended.await(GUARD_NANOS, TimeUnit.NANOSECONDS), "the interrupted allreduce never returned");
        assertInstanceOf(KoloInterruptedException.class, thrown.get());

        runLateAndCheckUntouched("in-place.interrupted", mine);
    }

    @Test
    void aGetPastItsTimeoutLetsGoOfTheTensor() throws Exception {
        Tensor mine = direct(5, 6, 7, 8);
        CompletableFuture<Tensor> f = byRank.get(0).allreduceInPlaceAsync("in-place.timed-out", mine, ReduceOp.SUM,
                1.0, 1.0);
        // Rank 1 has not submitted it: the get ends by its own timeout.
        assertThrows(TimeoutException.class, () -> f.get(50, TimeUnit.MILLISECONDS));
        runLateAndCheckUntouched("in-place.timed-out", mine);
    }

    @Test
    void anAbandonedOpNeverWritesTheCallersTensor() throws Exception {
        Tensor mine = direct(9, 10, 11, 12);
        CompletableFuture<Tensor> f = byRank.get(0).allreduceInPlaceAsync("in-place.abandoned", mine, ReduceOp.SUM,
                1.0, 1.0);
        byRank.get(0).abandon(f);
        runLateAndCheckUntouched("in-place.abandoned", mine);
        // The abandoned op ran, on its copy, for rank 1: its future completed there too.
        assertTrue(f.isDone(), "rank 0's abandoned op never completed");
    }

    /**
     * Rank 1 submits {@code name}, so the op rank 0 gave up on runs; once both ranks have run a later blocking op
     * (ops run in order), rank 0's run of {@code name} is over, and {@code mine} must hold what it held before.
     */
    private static void runLateAndCheckUntouched(String name, Tensor mine) throws Exception {
        float[] before = mine.toFloatArray();
        Tensor theirs = direct(100, 100, 100, 100);
        Tensor sum = byRank.get(1).allreduceAsync(name, theirs, ReduceOp.SUM).get(GUARD_NANOS, TimeUnit.NANOSECONDS);
        float[] expected = new float[before.length];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = before[i] + 100;
        }
        assertArrayEquals(expected, sum.toFloatArray(), 0f, "rank 1's result holds rank 0's input as it was");
        job.onAll(k -> k.allreduce("after." + name, one(), ReduceOp.SUM));
        assertArrayEquals(before, mine.toFloatArray(), 0f, "the op rank 0 gave up on wrote into its tensor "
                + "afterwards: " + Arrays.toString(mine.toFloatArray()));
    }

    private static Tensor direct(float... values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        return Tensor.wrap(DType.FLOAT32, b, values.length);
    }

    /** Waits until {@code t} is inside Kolo's wait for its op (its stack is in the engine's drive loop). */
    private static void awaitInKolosWait(Thread t) throws InterruptedException {
        Conditions.await(() -> {
            for (StackTraceElement e : t.getStackTrace()) {
                if (e.getClassName().endsWith("CollectiveClient") && e.getMethodName().equals("drive")) {
                    return true;
                }
            }
            return false;
        }, "the waiter never entered Kolo's wait");
    }

    /**
     * Waits until {@code t} is seen blocked (parked, or in the data plane's selector) at 20 samples in a row: a
     * thread that polls briefly and then parks is, a thread that spins never is.
     */
    static void awaitParked(Thread t) throws InterruptedException {
        int[] inARow = {0};
        StringBuilder last = new StringBuilder();
        Conditions.await(() -> {
            ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(new long[] {t.getId()}, false, false,
                    4)[0];
            if (info != null && blocked(info)) {
                inARow[0]++;
            } else {
                inARow[0] = 0;
                last.setLength(0);
                last.append(info == null ? "gone" : info.getThreadState() + " " + Arrays.toString(info.getStackTrace()));
            }
            return inARow[0] >= 20;
        }, () -> t.getName() + " never stayed parked while it waited; last seen " + last);
    }

    private static boolean blocked(ThreadInfo info) {
        Thread.State state = info.getThreadState();
        if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
            return true;
        }
        StackTraceElement[] stack = info.getStackTrace();
        // A selector's wait shows as RUNNABLE: it is blocked in the kernel's epoll_wait.
        return state == Thread.State.RUNNABLE && stack.length > 0 && stack[0].getClassName().startsWith("sun.nio.ch.")
                && stack[0].getMethodName().equals("wait");
    }

    private static Thread collectiveThread(Kolo kolo) {
        String name = "kolo-collectives-" + kolo.nodeId().substring(0, 8);
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + name));
    }



    private static Tensor one() {
        return Tensor.of(new float[] {1}, 1);
    }
}
