package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.testing.StatusJson;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker whose program calls close while the others still run (a rank that finished first, a job's ranks
 * closing one after another): the others' generation ends, so nothing waits for the closed rank for ever, but
 * as an orderly end. Their error says the rank closed, they log no warning, no worker counts as lost, and the
 * coordinator's status page shows the rank closed. With the job's defaults (its metrics and status port too).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OrderlyCloseTest {

    @Test
    void aRankThatClosesEndsTheOthersGenerationWithoutAWarningOrALoss() throws Exception {
        String name = LocalJob.uniqueName("orderly");
        int clusterPort = LocalJob.freshPortRange();
        try (LogCapture log = LogCapture.start(); LocalJob job = LocalJob.start(name, 3, i -> KoloConfig.builder()
                .jobName(name).np(3).set(Settings.CLUSTER_PORT, clusterPort).rendezvousTimeout(Duration.ofSeconds(60)).build())) {
            // The highest rank that does not coordinate closes, so the others keep their coordinator.
            List<Kolo> byRank = job.byRank();
            Kolo closer = null;
            for (Kolo k : byRank) {
                if (!k.nodeId().equals(k.coordinatorNode())) {
                    closer = k;
                }
            }
            int closed = closer.rank();
            List<Kolo> others = new ArrayList<>(byRank);
            others.remove(closer);
            List<CompletableFuture<Void>> barriers = new ArrayList<>();
            for (Kolo k : others) {
                barriers.add(CompletableFuture.runAsync(k::barrier));
            }

            int before = log.lines(l -> true).size(); // what the start logged is not part of the close
            closer.close();

            for (CompletableFuture<Void> b : barriers) {
                try {
                    b.get(30, TimeUnit.SECONDS);
                    fail("a barrier completed although a rank closed before reaching it");
                } catch (ExecutionException e) {
                    assertInstanceOf(WorkerLostException.class, e.getCause(), String.valueOf(e.getCause()));
                }
            }
            // Once membership has seen the rank go, what the others submit fails at once, naming it and its close
            // (the data plane may name the first peer it saw close a connection before that).
            for (Kolo k : others) {
                WorkerLostException last = LocalJob.lastLossError(k,
                        e -> e.lostRank() == closed && e.getMessage().contains("closed"));
                assertEquals(closed, last.lostRank(), last.getMessage());
                assertTrue(last.getMessage().contains("rank " + closed) && last.getMessage().contains(
                        "closed (its program called close)"), last.getMessage());
                assertEquals(0.0, k.meterRegistry().counter("kolo.workers.lost").count(),
                        "an orderly close is not a lost worker");
            }
            Kolo coordinator = others.stream().filter(k -> k.nodeId().equals(k.coordinatorNode())).findFirst()
                    .orElseThrow();
            String state = null;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!"closed".equals(state) && System.nanoTime() < until) {
                for (Object o : StatusJson.get(coordinator.statusUrl()).getJsonArray("ranks")) {
                    JsonObject row = (JsonObject) o;
                    if (row.getInteger("rank") == closed) {
                        state = row.getString("state");
                    }
                }
                Thread.sleep(50); // poll interval; the deadline above bounds the wait
            }
            assertEquals("closed", state, "the coordinator's status page shows the closed rank as closed");
            List<String> all = log.lines(l -> true);
            List<String> warnings = all.subList(before, all.size()).stream()
                    .filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).toList();
            assertEquals(List.of(), warnings, "a rank's orderly close is nothing the others' users must read");
        }
    }
}
