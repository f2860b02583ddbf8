package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ElasticState#stepDone()} in a fixed job of two real workers (in this JVM): rank 1 is asked to stop (as its
 * SIGTERM hook asks) at step 7; both stop at the next boundary, step 8, with the stop's status, rank 0 having written
 * that step as a checkpoint (due only every 1000 commits otherwise); a new job resumes from step 8.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StopAtStepTest {
    static final int ASKED_AT = 7;

    @Test
    void aStopAskedOfOneRankStopsEveryRankAtTheSameCheckpointedStep(@TempDir Path dir) throws Exception {
        List<Object> ends;
        try (InProcessJob job = new InProcessJob(2, b -> b)) {
            ends = job.onAll(k -> train(k, dir, true));
        }
        for (Object end : ends) {
            assertTrue(end instanceof ElasticJobFailedException, "every rank stops: " + end);
            ElasticJobFailedException e = (ElasticJobFailedException) end;
            assertTrue(e.stopped(), e.getMessage());
            assertEquals(ElasticJobFailedException.STOPPED_STATUS, e.exitStatus());
            assertTrue(e.getMessage().contains("rank 1 was told to stop") && e.getMessage().contains("at commit 2")
                    && e.getMessage().contains("resume from this step"), e.getMessage());
        }
        try (InProcessJob job = new InProcessJob(2, b -> b)) {
            List<Object> resumed = job.onAll(k -> train(k, dir, false));
            assertEquals(List.of(ASKED_AT + 1L, ASKED_AT + 1L), resumed, "both resume at the step they stopped at");
        }
    }

    /**
     * A training loop of 20 steps committing every 5; with {@code ask}, rank 1 asks to stop at step 7.
     *
     * @return the exception a stop threw, or the step the run resumed at
     */
    private static Object train(Kolo k, Path dir, boolean ask) {
        try (ElasticState state = ElasticState.builder(k).checkpointDirectory(dir).checkpointEvery(1000)
                .leaveOnSigterm(false, Duration.ofSeconds(1)).build()) {
            float[] weights = new float[16];
            state.floats("w", weights, weights.length).value("step", 0L);
            return Elastic.run(k, state, s -> {
                long resumedAt = s.longValue("step");
                for (long step = resumedAt + 1; step <= 20; step++) {
                    weights[0] = step;
                    s.set("step", step);
                    if (ask && k.rank() == 1 && step == ASKED_AT) {
                        s.requestLeave();
                    }
                    s.stepDone();
                    if (step % 5 == 0) {
                        s.commit();
                    }
                }
                return (Object) resumedAt;
            });
        } catch (ElasticJobFailedException e) {
            return e;
        }
    }
}
