package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An elastic worker alone below {@code KOLO_MIN_NP} waits for the others in {@code Kolo.init}: that wait must
 * park, not spin, since a worker can wait there for its whole rendezvous timeout (minutes) on a shared host.
 * The other half, a worker idle after its generation was aborted, is {@link AbortedGenerationIdleTest}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BelowMinimumIdleTest {
    private static KoloConfig config(String job) {
        return LocalJob.config(job, 2).minNp(2).maxNp(3).rendezvousTimeout(Duration.ofSeconds(90)).build();
    }

    @Test
    void aWorkerWaitingAloneForItsPeersUsesUnderFivePercentOfACore() throws Exception {
        String job = LocalJob.uniqueName("below-min");
        CompletableFuture<Kolo> alone = CompletableFuture.supplyAsync(() -> Kolo.init(config(job)));
        CompletableFuture<Kolo> second = null;
        try {
            // Forming a one-member Hazelcast cluster keeps the process busy for a few seconds: the first quiet
            // 2 s window counts. A spinning wait fails every window, and the message names its thread.
            ProcessCpu.Sample waiting = ProcessCpu.firstQuietWindow(Duration.ofSeconds(2), 0.05,
                    Duration.ofSeconds(30));
            assertFalse(alone.isDone(), "the worker should still wait for its peer, but: " + alone);
            assertTrue(waiting.share() < 0.05, "a worker waiting below KOLO_MIN_NP spins: " + waiting);

            // It really was waiting for the job: a second worker completes its rendezvous.
            second = CompletableFuture.supplyAsync(() -> Kolo.init(config(job)));
            Kolo a = alone.get(60, TimeUnit.SECONDS);
            Kolo b = second.get(60, TimeUnit.SECONDS);
            assertEquals(2, a.size());
            assertEquals(2, b.size());
        } finally {
            if (second == null) { // the check failed: a second worker still ends the first one's rendezvous
                second = CompletableFuture.supplyAsync(() -> Kolo.init(config(job)));
            }
            closeQuietly(alone);
            closeQuietly(second);
        }
    }

    private static void closeQuietly(CompletableFuture<Kolo> worker) {
        if (worker == null) {
            return;
        }
        try {
            worker.get(60, TimeUnit.SECONDS).close();
        } catch (Exception e) {
            // the worker never started: nothing to close, and the test already reports why
        }
    }
}
