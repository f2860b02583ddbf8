package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.internal.control.ControlMessage;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The workers of a job close together, as every job ends: each tells the other it closes, and the two notices
 * cross. The notice to a worker may come a while after that worker's answer to it (the first message to an
 * address waits for the cluster's lookup of it; an answer does not), so a worker that left as soon as it was
 * answered stopped listening before the notice arrived, and Vert.x logged the late message at WARN. Here the
 * notices are held back on arrival: the one to rank 1 until both have sent theirs, the one to rank 0 for longer
 * than a close takes once answered. Rank 0 must still answer it before it leaves, and neither close may log
 * anything at WARN or ERROR.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrossingCloseTest {
    /** Longer than both closes take to start: each sends its notice before it receives the other's. */
    private static final long HOLD_TO_RANK_1_MS = 200;
    /**
     * Longer than a close takes once its notice is answered (about 0.5 s here), shorter than it waits for a
     * notice it was told of (its deadline is 3 s).
     */
    private static final long HOLD_TO_RANK_0_MS = 1500;

    @Test
    void crossingCloseNoticesArriveWhileTheirReceiversListen() throws Exception {
        String name = LocalJob.uniqueName("crossing");
        LocalJob job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).build());
        try (LogCapture log = LogCapture.start()) {
            List<Kolo> byRank = job.byRank();
            AtomicInteger held = new AtomicInteger();
            AtomicInteger answeredByRank0 = new AtomicInteger();
            Vertx rank0 = byRank.get(0).clusterNode().vertx();
            rank0.eventBus().addOutboundInterceptor(ctx -> {
                if (ctx.body() instanceof ControlMessage.Closing && !ctx.message().address().startsWith("kolo.")) {
                    answeredByRank0.incrementAndGet(); // an answer goes to a reply address, a notice to a kolo. one
                }
                ctx.next();
            });
            hold(rank0, HOLD_TO_RANK_0_MS, held);
            hold(byRank.get(1).clusterNode().vertx(), HOLD_TO_RANK_1_MS, held);
            int before = log.lines(l -> true).size();

            CompletableFuture<?>[] closes = byRank.stream().map(k -> CompletableFuture.runAsync(k::close))
                    .toArray(CompletableFuture[]::new);
            CompletableFuture.allOf(closes).get(60, TimeUnit.SECONDS);

            assertEquals(2, held.get(), "both notices were sent, so both crossed:\n" + log.all());
            // Rank 1 told rank 0's worker and its coordinator: a notice that came after rank 0 stopped listening
            // went unanswered (and, arriving just as it stopped, was logged at WARN).
            assertEquals(2, answeredByRank0.get(), "rank 0 answered both of rank 1's close notices");
            List<String> all = log.lines(l -> true);
            List<String> loud = all.subList(before, all.size()).stream()
                    .filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).toList();
            assertEquals(List.of(), loud, "closing together is nothing a user must read");
        } finally {
            job.close();
        }
    }

    /**
     * Delivers each close notice that arrives at this worker's Vert.x only {@code millis} later, from a thread of
     * its own: a worker that left meanwhile never gets it (its Vert.x closed), one that waits for it does.
     */
    private static void hold(Vertx vertx, long millis, AtomicInteger held) {
        vertx.eventBus().addInboundInterceptor(ctx -> {
            if (isCloseNotice(ctx.message())) {
                held.incrementAndGet();
                Thread release = new Thread(() -> {
                    try {
                        Thread.sleep(millis); // the delay is the point: a notice on a slow route
                    } catch (InterruptedException e) {
                        return;
                    }
                    ctx.next();
                }, "hold-close-notice");
                release.setDaemon(true);
                release.start();
            } else {
                ctx.next();
            }
        });
    }

    /** @return whether {@code m} is a worker's close notice to another worker (not its answer, not to a coordinator) */
    private static boolean isCloseNotice(io.vertx.core.eventbus.Message<?> m) {
        return m.body() instanceof ControlMessage.Closing && m.replyAddress() != null
                && m.address().contains(".worker.");
    }
}
