package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.OpRequest;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The event bus delivers at most once: a request or response lost on the way costs one resend interval (1 s),
 * not a stall until the stall inspector's 600 s; and a re-sent request is counted once. Each loss is made on
 * purpose, on receipt, on a real three-rank job.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LostControlMessageTest {
    /** Far below the stall inspector's times, above one resend interval plus a loaded machine's delays. */
    private static final long OP_SECONDS = 10;
    /** Short enough for a test, long enough for the ops that do complete (each in about one resend interval). */
    private static final Duration STALL_SHUTDOWN = Duration.ofSeconds(6);
    private static LocalJob job;
    private static final Kolo[] RANKS = new Kolo[3];

    @BeforeAll
    static void start() {
        String name = LocalJob.uniqueName("lost-ctl");
        job = LocalJob.start(name, 3, i -> LocalJob.config(name, 3).set(Settings.STALL_WARNING, Duration.ofSeconds(3))
                .set(Settings.STALL_SHUTDOWN, STALL_SHUTDOWN).build());
        job.workers.forEach(k -> RANKS[k.rank()] = k);
        assertTrue(RANKS[0].coordinatorRank() == 0, "rank 0 should coordinate");
    }

    @AfterAll
    static void stop() {
        if (job != null) {
            job.close();
        }
    }

    @Test
    void aLostRequestIsSentAgain() throws Exception {
        Kolo coordinator = RANKS[0];
        coordinator.clusterNode().loseReceived(once(m -> m instanceof OpRequest r && r.rank() == 1
                && r.spec().name.equals("lost-request")));
        double resentBefore = resent(RANKS[1]);
        try {
            allreduceOnAll("lost-request", 1);
        } finally {
            coordinator.clusterNode().loseReceived(null);
        }
        assertTrue(resent(RANKS[1]) > resentBefore, "rank 1 should have re-sent its lost request");
    }

    @Test
    void aLostResponseIsSentAgainAndTheCopyOfTheRequestCountsOnce() throws Exception {
        RANKS[1].clusterNode().loseReceived(once(m -> m instanceof OpResponse r
                && r.entries().stream().anyMatch(e -> e.name().equals("lost-response"))));
        double copiesBefore = duplicates(RANKS[0]);
        try {
            allreduceOnAll("lost-response", 1);
        } finally {
            RANKS[1].clusterNode().loseReceived(null);
        }
        // Rank 1 re-sent its request after the coordinator had answered it: a copy, not a new request.
        assertTrue(duplicates(RANKS[0]) > copiesBefore, "the coordinator should have seen rank 1's copy");

        // Had the copy been counted, the coordinator would hold a request of rank 1 for the name already: ranks 0
        // and 2 submitting it anew (another shape: it goes to the coordinator) would get an answer without rank 1.
        List<CompletableFuture<Tensor>> early = List.of(
                RANKS[0].allreduceAsync("lost-response", Tensor.of(new float[] {1f, 1f}, 2), ReduceOp.SUM),
                RANKS[2].allreduceAsync("lost-response", Tensor.of(new float[] {3f, 3f}, 2), ReduceOp.SUM));
        // Until their requests have waited a resend interval: the coordinator has them (and would have answered).
        double resent0 = resent(RANKS[0]);
        double resent2 = resent(RANKS[2]);
        await(() -> early.stream().anyMatch(CompletableFuture::isDone)
                || resent(RANKS[0]) > resent0 && resent(RANKS[2]) > resent2, "ranks 0 and 2 never re-sent");
        early.forEach(f -> assertFalse(f.isDone(), "answered without rank 1: its copy was counted: " + f));
        Tensor late = RANKS[1].allreduce("lost-response", Tensor.of(new float[] {2f, 2f}, 2), ReduceOp.SUM);
        assertArrayEquals(new float[] {6f, 6f}, late.toFloatArray());
        for (CompletableFuture<Tensor> f : early) {
            assertArrayEquals(new float[] {6f, 6f}, f.get(OP_SECONDS, TimeUnit.SECONDS).toFloatArray());
        }
    }

    @Test
    void aStallNamesOnlyTheRanksThatDidNotSubmit() throws Exception {
        Kolo coordinator = RANKS[0];
        coordinator.clusterNode().loseReceived(once(m -> m instanceof OpRequest r && r.rank() == 1
                && r.spec().name.equals("two-of-three")));
        try {
            // Ranks 0 and 1 submit, rank 1's request is lost once, rank 2 never submits.
            List<CompletableFuture<Tensor>> submitted = List.of(
                    RANKS[0].allreduceAsync("two-of-three", Tensor.of(new float[] {1f}, 1), ReduceOp.SUM),
                    RANKS[1].allreduceAsync("two-of-three", Tensor.of(new float[] {2f}, 1), ReduceOp.SUM));
            for (CompletableFuture<Tensor> f : submitted) {
                java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.ExecutionException.class,
                        () -> f.get(STALL_SHUTDOWN.toSeconds() + OP_SECONDS, TimeUnit.SECONDS));
                String message = e.getCause().getMessage();
                assertTrue(message.contains("'two-of-three' stalled: ranks [2] did not submit it"), message);
            }
        } finally {
            coordinator.clusterNode().loseReceived(null);
        }
    }

    /** Every rank allreduces {@code name} (rank + 1 each): done on every rank within {@link #OP_SECONDS}. */
    private static void allreduceOnAll(String name, int length) throws Exception {
        long start = System.nanoTime();
        List<Tensor> out = job.onAll(k -> k.allreduceAsync(name, Tensor.of(new float[] {k.rank() + 1f}, length),
                ReduceOp.SUM)).stream().map(f -> {
                    try {
                        return f.get(OP_SECONDS, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new AssertionError("'" + name + "' did not complete on every rank within " + OP_SECONDS
                                + " s: a lost control message stalled it", e);
                    }
                }).toList();
        for (Tensor t : out) {
            assertArrayEquals(new float[] {6f}, t.toFloatArray());
        }
        System.out.println("'" + name + "' completed after " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    /** Matches the first message {@code which} matches, and nothing after. */
    private static Predicate<ControlMessage> once(Predicate<ControlMessage> which) {
        AtomicBoolean lost = new AtomicBoolean();
        return m -> which.test(m) && lost.compareAndSet(false, true);
    }

    private static double resent(Kolo k) {
        return k.meterRegistry().get("kolo.control.resent").counter().count();
    }

    private static double duplicates(Kolo k) {
        return k.meterRegistry().get("kolo.control.copies").counter().count();
    }

    private static void await(BooleanSupplier condition, String failure) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(OP_SECONDS).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(failure + " within " + OP_SECONDS + " s");
            }
            Thread.sleep(20); // polling a counter: no event to wait on
        }
    }
}
