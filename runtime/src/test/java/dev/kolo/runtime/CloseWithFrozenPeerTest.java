package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.kolo.testing.ChildJvms;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker closes while one of its peers is frozen (SIGSTOP, as a paused or swapped-out process is): its close
 * still returns, since each of its waits has a deadline (the notice the frozen peer never answers, the Hazelcast
 * member's graceful leave, which the frozen member cannot take part in), and the peer that runs is told the rank
 * closed in order, although the notice to the frozen one never arrives. Three workers with the defaults: two
 * worker processes and one in this JVM, the one that closes; a cluster for each order of the close and the frozen
 * peer's loss.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class CloseWithFrozenPeerTest {
    /**
     * How long the close may take here: the notice (at most 3 s) and the graceful leave (at most 5 s) with room
     * for a loaded machine; without those deadlines a frozen peer holds the close for minutes.
     */
    private static final int CLOSE_DEADLINE_SECONDS = 30;
    private final ChildJvms jvms = new ChildJvms();

    @AfterEach
    void stopAll() throws Exception {
        jvms.close();
    }

    @Test
    void closeReturnsAndTheRunningPeerIsToldWhileAnotherPeerIsFrozen() throws Exception {
        closeWithAFrozenPeer(false);
    }

    /**
     * The frozen peer is dropped from the cluster first (its heartbeats stop), which ends the generation as a
     * loss; the close that follows is still told to the running peer and logged there as a close, not taken for
     * a second failure. On a loaded machine the close above can take this order too.
     */
    @Test
    void aCloseAfterTheFrozenPeerWasDroppedIsStillToldAsAClose() throws Exception {
        closeWithAFrozenPeer(true);
    }

    private void closeWithAFrozenPeer(boolean afterTheLoss) throws Exception {
        String job = LocalJob.uniqueName("frozen");
        int ports = LocalJob.freshPortRange();
        for (int i = 0; i < 2; i++) {
            jvms.start(ProbeWorker.class, List.of("-Xmx256m"), Map.of("KOLO_METRICS_PORT", "0", "KOLO_JOB", job,
                    "KOLO_NP", "3", "KOLO_CLUSTER_PORT", Integer.toString(ports)));
        }
        Kolo kolo = Kolo.init(KoloConfig.builder().jobName(job).np(3).metricsPort(0).set(Settings.CLUSTER_PORT, ports).build());
        int closing;
        try {
            kolo.barrier(); // the processes pass it too, and say so
            jvms.awaitEach(0, 2, 60, "the worker processes passing a barrier", l -> l.contains("probe barrier passed"));
            closing = kolo.rank();
            jvms.signal(0, "STOP");
            if (afterTheLoss) {
                jvms.await(0, 60, "the running worker process ending the generation with the frozen one's loss",
                        l -> l.startsWith("[1] ") && l.contains("left the cluster; generation"));
            }
            long start = System.nanoTime();
            try {
                CompletableFuture.runAsync(kolo::close).get(CLOSE_DEADLINE_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("close did not return within " + CLOSE_DEADLINE_SECONDS
                        + " s while a peer was frozen: one of its waits has no deadline", e);
            }
            System.out.printf("close with a frozen peer returned in %.1f s%n", (System.nanoTime() - start) / 1e9);
        } finally {
            kolo.close();
        }
        String told = jvms.await(0, 30, "the running worker process noting the close",
                l -> l.startsWith("[1] ") && l.contains("rank " + closing + " ")
                        && l.contains("closed (its program called close)"));
        assertNotNull(told);
        jvms.signal(0, "CONT");
    }
}
