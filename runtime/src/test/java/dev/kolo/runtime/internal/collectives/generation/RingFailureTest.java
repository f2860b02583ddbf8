package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.RingProtocolException;
import dev.kolo.runtime.internal.transport.connect.Endpoint;
import dev.kolo.runtime.internal.transport.connect.PeerAddress;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A lost, hung or misbehaving peer fails the op on every rank within seconds; nothing hangs. */
@Timeout(30)
class RingFailureTest {

    /** What one rank's op ended with, and when. */
    record Outcome(Throwable error, long millis) {
    }

    private static Outcome timed(TestRings.RankTask<Void> op, int rank, GenerationDataPlane ring) {
        long t0 = System.nanoTime();
        try {
            op.run(rank, ring);
            return new Outcome(null, (System.nanoTime() - t0) / 1_000_000);
        } catch (Throwable e) {
            return new Outcome(e, (System.nanoTime() - t0) / 1_000_000);
        }
    }

    @Test
    void peerCrashingMidOpFailsTheOpOnEveryRankNamingIt() throws Exception {
        TransportOptions options = TransportOptions.builder().chunkBytes(64 * 1024).build(); // 30 s progress timeout
        try (TestRings c = TestRings.formed(4, options)) {
            c.rings.get(2).crashAfterFrames(5);
            long seq = c.nextSeq();
            int count = 2 << 20; // 8 MiB: many chunks, so the crash lands mid-op
            List<Outcome> out = c.onAll((rank, ring) -> timed((r, g) -> {
                g.allreduce(seq, Elements.direct(count * 4), DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
                return null;
            }, rank, ring), 10);
            for (int r = 0; r < 4; r++) {
                Outcome o = out.get(r);
                assertInstanceOf(WorkerLostException.class, o.error(), "rank " + r);
                assertTrue(o.millis() < 5000, "rank " + r + " took " + o.millis() + " ms");
            }
            // Every survivor names it, with its host: its neighbours because their connections to it failed,
            // rank 0 because the abort notices of the ranks it hears from name it.
            for (int r : new int[] {0, 1, 3}) {
                WorkerLostException e = (WorkerLostException) out.get(r).error();
                assertEquals(2, e.lostRank(), "rank " + r + ": " + e.getMessage());
                assertEquals("127.0.0.1", e.lostHost());
                assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
            }
            // The generation is aborted everywhere: later ops fail at once.
            for (int r = 0; r < 4; r++) {
                GenerationDataPlane ring = c.rings.get(r);
                assertTrue(ring.isAborted(), "rank " + r);
                assertThrows(WorkerLostException.class,
                        () -> ring.allreduce(seq + 1, Elements.direct(4), DType.FLOAT32, 1, ReduceOp.SUM));
            }
        }
    }

    /**
     * A co-located peer that goes away without a word (its process ends: the kernel closes its connections, no abort
     * notice in the rings) while the others wait for its bytes in shared memory: they are parked in their selectors on
     * the doorbell sockets, whose end wakes them, and fail at once rather than at the progress deadline.
     */
    @Test
    void sharedMemoryPeerWhoseConnectionsEndFailsTheOthersAtOnce() throws Exception {
        TransportOptions options = TransportOptions.builder().sharedMemory(true).build(); // 30 s progress timeout
        try (TestRings c = TestRings.formed(3, options)) {
            assertEquals("shm", c.rings.get(0).transport());
            long seq = c.nextSeq();
            int count = 1 << 20;
            List<Future<Outcome>> fs = c.submitAll((rank, ring) -> {
                if (rank == 2) {
                    Thread.sleep(300); // the others are parked, waiting for it
                    ring.close();
                    return null;
                }
                return timed((r, g) -> {
                    g.allreduce(seq, Elements.direct(count * 4), DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
                    return null;
                }, rank, ring);
            });
            for (int r = 0; r < 2; r++) {
                Outcome o = fs.get(r).get(20, TimeUnit.SECONDS);
                assertInstanceOf(WorkerLostException.class, o.error(), "rank " + r);
                assertTrue(o.millis() < 5000, "rank " + r + " took " + o.millis() + " ms");
            }
        }
    }

    @Test
    void hungPeerFailsTheOthersAfterTheProgressTimeout() throws Exception {
        TransportOptions options = TransportOptions.builder().progressTimeout(Duration.ofMillis(500)).build();
        try (TestRings c = TestRings.formed(3, options)) {
            long seq = c.nextSeq();
            List<Future<Outcome>> fs = c.submitAll((rank, ring) -> rank == 2 ? null : timed((r, g) -> {
                g.allreduce(seq, Elements.direct(4096), DType.FLOAT32, 1024, ReduceOp.SUM, 1.0, 1.0);
                return null;
            }, rank, ring));
            Outcome r0 = fs.get(0).get(5, TimeUnit.SECONDS);
            Outcome r1 = fs.get(1).get(5, TimeUnit.SECONDS);
            assertInstanceOf(WorkerLostException.class, r0.error());
            assertInstanceOf(WorkerLostException.class, r1.error());
            assertTrue(r0.millis() < 3000 && r1.millis() < 3000, r0.millis() + " / " + r1.millis() + " ms");
            // Rank 0 waits on its left neighbour, the hung rank 2.
            assertEquals(2, ((WorkerLostException) r0.error()).lostRank(), r0.error().getMessage());
            assertTrue(r0.error().getMessage().contains("no progress"), r0.error().getMessage());
        }
    }

    @Test
    void abortWakesABlockedOpAtOnceWithTheReason() throws Exception {
        try (TestRings c = TestRings.formed(2, TransportOptions.defaults())) {
            long seq = c.nextSeq();
            Future<Outcome> f = c.submitAll((rank, ring) -> rank == 1 ? null : timed((r, g) -> {
                g.allreduce(seq, Elements.direct(64), DType.FLOAT32, 16, ReduceOp.SUM, 1.0, 1.0);
                return null;
            }, rank, ring)).get(0);
            // Rank 0 is inside the op once its first chunk reaches rank 1, which never joins it: from then on
            // it can only wait for rank 1's chunk.
            assertTrue(c.rings.get(1).awaitPeer(TimeUnit.SECONDS.toNanos(5)), "rank 0 never started the op");
            long t0 = System.nanoTime();
            c.rings.get(0).abort("membership changed");
            Outcome o = f.get(5, TimeUnit.SECONDS);
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 1000, "woke too late");
            assertInstanceOf(WorkerLostException.class, o.error(), () -> String.valueOf(o.error()));
            assertTrue(o.error().getMessage().contains("membership changed"), o.error().getMessage());
            // The peer, which never joined that op, fails its next one promptly: the generation is gone.
            GenerationDataPlane peer = c.rings.get(1);
            long t1 = System.nanoTime();
            WorkerLostException e = assertThrows(WorkerLostException.class,
                    () -> peer.allreduce(seq + 1, Elements.direct(64), DType.FLOAT32, 16, ReduceOp.SUM));
            assertTrue((System.nanoTime() - t1) / 1_000_000 < 2000);
            assertEquals(0, e.lostRank(), e.getMessage());
        }
    }

    @Test
    void mismatchedOpSequenceIsAProtocolErrorOnEveryRank() throws Exception {
        try (TestRings c = TestRings.formed(2, TransportOptions.defaults())) {
            List<Outcome> out = c.onAll((rank, ring) -> timed((r, g) -> {
                g.allreduce(100 + rank, Elements.direct(64), DType.FLOAT32, 16, ReduceOp.SUM, 1.0, 1.0);
                return null;
            }, rank, ring), 10);
            for (Outcome o : out) {
                assertInstanceOf(WorkerLostException.class, o.error());
            }
            boolean protocol = out.stream().anyMatch(o -> o.error() instanceof RingProtocolException
                    && o.error().getMessage().contains("op 100") && o.error().getMessage().contains("op 101"));
            assertTrue(protocol, out.toString());
        }
    }

    @Test
    void neighbourThatNeverShowsUpFailsRingFormationInTime() throws Exception {
        TransportOptions options = TransportOptions.builder().connectTimeout(Duration.ofMillis(700)).build();
        try (TestRings c = TestRings.planes(2, "test-job", options)) {
            long t0 = System.nanoTime();
            WorkerLostException e = assertThrows(WorkerLostException.class,
                    () -> TestRings.open(c.planes.get(0), 1, 0, c.peers));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 3000, ms + " ms");
            assertEquals(1, e.lostRank(), e.getMessage());
        }
    }

    @Test
    void unreachablePeerAddressFailsRingFormation() throws Exception {
        TransportOptions options = TransportOptions.builder().connectTimeout(Duration.ofMillis(500)).build();
        try (TestRings c = TestRings.planes(1, "test-job", options)) {
            int closedPort;
            try (var s = Endpoint.bindEphemeral("127.0.0.1")) {
                closedPort = s.socket().getLocalPort();
            }
            List<PeerAddress> peers = List.of(c.peers.get(0), new PeerAddress("127.0.0.1", closedPort));
            WorkerLostException e = assertThrows(WorkerLostException.class,
                    () -> TestRings.open(c.planes.get(0), 1, 0, peers));
            assertEquals(1, e.lostRank());
            assertTrue(e.getMessage().contains(String.valueOf(closedPort)), e.getMessage());
        }
    }


}
