package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A collective called from an op's completion callback: the callback never runs while its thread holds the
 * collective engine, so the blocking call inside it drives the engine itself and completes, on every rank.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CallbackCollectiveTest {
    /** Far longer than a chain takes, far shorter than the op timeout: a chain that hangs fails here. */
    private static final long CHAIN_SECONDS = 10;
    private static LocalJob job;

    @BeforeAll
    static void form() {
        String name = LocalJob.uniqueName("callback");
        // The op timeout is long, so that a hang is seen as one, not as a timeout inside the callback.
        job = LocalJob.start(name, 2, i -> LocalJob.config(name, 2).set(Settings.OP_TIMEOUT, Duration.ofSeconds(60)).build());
    }

    @AfterAll
    static void leave() {
        if (job != null) {
            job.close();
        }
    }

    @Test
    void blockingAllreduceInThenApplyCompletesOnBothRanks() throws Exception {
        // Several times: the first is negotiated by the coordinator, the later ones agreed in rounds (cached).
        for (int step = 0; step < 5; step++) {
            int s = step;
            List<CompletableFuture<Tensor>> chains = job.onAll(k -> k.allreduceAsync("a", vector(k, 1), ReduceOp.SUM)
                    .thenApply(a -> k.allreduce("b", vector(k, 10 + s), ReduceOp.SUM)));
            for (CompletableFuture<Tensor> chain : chains) {
                Tensor b = chain.get(CHAIN_SECONDS, TimeUnit.SECONDS);
                assertArrayEquals(new float[] {2 * (10 + s) + 1, 2 * (10 + s) + 1}, b.toFloatArray(), 0f);
            }
        }
    }

    @Test
    void futureJoinedInsideACallbackCompletes() throws Exception {
        List<CompletableFuture<Float>> chains = job.onAll(k -> k.allreduceAsync("c", vector(k, 1), ReduceOp.SUM)
                .thenApply(c -> k.allreduceAsync("d", vector(k, 2), ReduceOp.SUM).join().toFloatArray()[0]
                        + c.toFloatArray()[0]));
        for (CompletableFuture<Float> chain : chains) {
            assertEquals(5f + 3f, chain.get(CHAIN_SECONDS, TimeUnit.SECONDS), 0f);
        }
    }

    /** {@code base} on every element, plus the rank: the sum over two ranks is 2 * base + 1. */
    private static Tensor vector(Kolo k, float base) {
        return Tensor.of(new float[] {base + k.rank(), base + k.rank()}, 2);
    }
}
