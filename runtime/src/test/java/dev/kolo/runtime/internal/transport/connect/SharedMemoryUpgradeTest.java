package dev.kolo.runtime.internal.transport.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.LogCapture;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.generation.Elements;
import dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane;
import dev.kolo.runtime.internal.collectives.generation.TestRings;
import dev.kolo.runtime.internal.transport.shm.SharedSegment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a generation's co-located connections move to shared memory: both ranks of a pair always agree on the
 * transport, nothing of the job stays in the segment directory once the ring has formed, a stale segment is swept
 * when the next generation connects, and a peer that cannot prove the job's secret never learns a segment's name.
 */
@Timeout(60)
class SharedMemoryUpgradeTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes();
    private static final byte[] OTHER_KEY = "fedcba9876543210fedcba9876543210".getBytes();

    @TempDir
    Path shm;

    private TransportOptions.Builder options() {
        return TransportOptions.builder().sharedMemoryDir(shm);
    }

    private List<String> segments() throws IOException {
        try (Stream<Path> files = Files.list(shm)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(SharedSegment.PREFIX)).toList();
        }
    }

    /** Forms generation {@code g} on every rank, checks one allreduce, returns each rank's transport. */
    private static List<String> formAndReduce(TestRings c, long g) throws Exception {
        c.rings.clear();
        c.rings.addAll(c.onAll((rank, ring) -> TestRings.open(c.planes.get(rank), g, rank, c.peers), 20));
        long seq = c.nextSeq();
        List<Float> sums = c.onAll((rank, ring) -> {
            ByteBuffer b = Elements.direct(4 * 100_000);
            for (int i = 0; i < 100_000; i++) {
                b.putFloat(4 * i, rank + i % 7);
            }
            ring.allreduce(seq, b, DType.FLOAT32, 100_000, ReduceOp.SUM);
            return b.getFloat(4 * 99_999);
        }, 20);
        float expected = 0;
        for (int r = 0; r < c.size; r++) {
            expected += r + 99_999 % 7;
        }
        for (float s : sums) {
            assertEquals(expected, s);
        }
        return c.rings.stream().map(GenerationDataPlane::transport).toList();
    }

    @Test
    void coLocatedRanksShareMemoryAndLeaveNoNameBehind() throws Exception {
        try (TestRings c = TestRings.planes(4, "job", options().build())) { // ring and direct connections
            assertEquals(List.of("shm", "shm", "shm", "shm"), formAndReduce(c, 1));
            assertEquals(List.of(), segments(), "every segment was removed once both ranks had mapped it");
            c.rings.forEach(GenerationDataPlane::close);
            assertEquals(List.of("shm", "shm", "shm", "shm"), formAndReduce(c, 2), "generations never share one");
            assertEquals(List.of(), segments());
        }
    }

    @Test
    void aRankWithSharedMemoryOffKeepsItsPairsOnTcpOnBothSides() throws Exception {
        try (TestRings c = TestRings.planes(3, "job", r -> options().sharedMemory(r != 1).build())) {
            // Rank 1 reaches 0 and 2 over TCP; 0 and 2 share memory with each other.
            assertEquals(List.of("shm+tcp", "tcp", "shm+tcp"), formAndReduce(c, 1));
            assertEquals(List.of(), segments());
        }
    }

    @Test
    void aSegmentThatCannotBeMadeLeavesThePairOnTcpWithAWarningThatNamesTheFix() throws Exception {
        TransportOptions nowhere = options().sharedMemoryDir(shm.resolve("missing")).build();
        try (TestRings c = TestRings.planes(2, "job", nowhere); LogCapture log = LogCapture.start()) {
            assertEquals(List.of("tcp", "tcp"), formAndReduce(c, 1));
            String warning = log.await(l -> l.contains("WARN") && l.contains("cannot create a shared-memory segment"), 5);
            assertTrue(warning.contains("KOLO_SHM_BYTES") && warning.contains("/dev/shm"), warning);
        }
    }

    @Test
    void aSegmentLeftByACreatorThatDiedIsRemovedWhenTheNextGenerationConnects() throws Exception {
        Process p = new ProcessBuilder("true").start();
        long dead = p.pid();
        p.waitFor();
        Path stale = Files.createFile(shm.resolve(SharedSegment.jobPrefix("job") + "g1-" + dead + "-0123456789abcdef"));
        try (TestRings c = TestRings.planes(2, "job", options().build())) {
            formAndReduce(c, 2);
            assertFalse(Files.exists(stale));
            assertEquals(List.of(), segments());
        }
    }

    @Test
    void aPeerWithoutTheSecretNeverLearnsASegmentsName() throws Exception {
        try (TestRings good = TestRings.planes(1, "job", options().authenticationKey(KEY).build());
                TestRings bad = TestRings.planes(1, "job", options().authenticationKey(OTHER_KEY).build())) {
            List<PeerAddress> peers = List.of(good.peers.get(0), bad.peers.get(0));
            // Rank 0 (the job's) connects to rank 1, which cannot prove the secret: rank 0 stops before any offer.
            KoloException e = assertThrows(KoloException.class, () -> TestRings.open(good.planes.get(0), 1, 0, peers));
            assertTrue(e.getMessage().contains("failed to prove") && e.getMessage().contains("KOLO_JOB_SECRET"),
                    e.getMessage());
            assertEquals(List.of(), segments(), "no segment was made for it");
        }
    }
}
