package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Rendezvous that cannot complete fails with a report; jobs with different names never mix. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RendezvousFailureTest {

    @Test
    void incompleteRendezvousFailsNamingWhoArrived() {
        String job = LocalJob.uniqueName("short");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> LocalJob.start(job, 2,
                i -> LocalJob.config(job, 3).rendezvousTimeout(Duration.ofSeconds(10)).build()));
        Throwable cause = e.getCause().getCause();
        assertTrue(cause instanceof KoloException, "expected KoloException, got " + cause);
        String message = cause.getMessage();
        assertTrue(message.contains("2 of 3 workers arrived"), message);
        assertTrue(message.contains("pid " + ProcessHandle.current().pid()), message);
        assertTrue(message.contains("start the missing 1 worker"), message);
    }

    @Test
    void surplusWorkerIsRefusedAtOnce() {
        String job = LocalJob.uniqueName("full");
        try (LocalJob two = LocalJob.start(job, 2, i -> LocalJob.config(job, 2).build())) {
            long start = System.nanoTime();
            KoloException e = assertThrows(KoloException.class, () -> Kolo.init(LocalJob.config(job, 2).build()));
            assertTrue(e.getMessage().contains("surplus"), e.getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "refusal took too long");
            assertEquals(2, two.workers.get(0).size());
        }
    }

    @Test
    void jobsWithDifferentNamesStaySeparate() throws Exception {
        String a = LocalJob.uniqueName("alpha");
        String b = LocalJob.uniqueName("beta");
        // Formed at the same time on the same port range: each must only see its own members.
        int shared = LocalJob.freshPortRange();
        java.util.concurrent.CompletableFuture<LocalJob> jobA = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> LocalJob.start(a, 2, i -> LocalJob.config(a, 2).set(Settings.CLUSTER_PORT, shared).build()));
        java.util.concurrent.CompletableFuture<LocalJob> jobB = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> LocalJob.start(b, 3, i -> LocalJob.config(b, 3).set(Settings.CLUSTER_PORT, shared).build()));
        try (LocalJob ja = jobA.get(90, TimeUnit.SECONDS); LocalJob jb = jobB.get(90, TimeUnit.SECONDS)) {
            for (Kolo k : ja.workers) {
                assertEquals(2, k.size());
            }
            for (Kolo k : jb.workers) {
                assertEquals(3, k.size());
            }
            List<String> nodesA = ja.workers.stream().map(Kolo::nodeId).toList();
            jb.workers.forEach(k -> assertTrue(!nodesA.contains(k.coordinatorNode())));
        }
    }

    @Test
    void takenDataPortIsReportedWithTheFix() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            KoloConfig c = LocalJob.config(LocalJob.uniqueName("port"), 1).dataPort(taken.getLocalPort()).build();
            KoloException e = assertThrows(KoloException.class, () -> Kolo.init(c));
            assertTrue(e.getMessage().contains("data port " + taken.getLocalPort()), e.getMessage());
            assertTrue(e.getMessage().contains("KOLO_DATA_PORT"), e.getMessage());
        }
    }

    @Test
    void unresolvableMemberIsReportedAtOnce() {
        KoloConfig c = LocalJob.config(LocalJob.uniqueName("members"), 2).discovery(Discovery.MEMBERS).set(Settings.INSECURE, true)
                .members(List.of("127.0.0.1:5701", "no-such-host.invalid:5701")).build();
        KoloException e = assertThrows(KoloException.class, () -> Kolo.init(c));
        assertTrue(e.getMessage().contains("no-such-host.invalid"), e.getMessage());
        assertTrue(e.getMessage().contains("--members"), e.getMessage());
    }
}
