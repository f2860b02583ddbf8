package dev.kolo.runtime.internal.transport.connect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.LogCapture;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.TestCerts;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane;
import dev.kolo.runtime.internal.collectives.generation.TestRings;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.PlainWire;
import dev.kolo.runtime.internal.transport.TlsWire;
import dev.kolo.runtime.internal.transport.Wire;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Data connections over TLS with real certificates (made by keytool): a ring of four (neighbours and the
 * direct mesh) computes the same as a double-precision reference; a certificate of another CA, a peer without
 * TLS (either way round), garbage instead of TLS records and a peer that never finishes its handshake are all
 * refused with a reason, in bounded time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
class TlsDataPlaneTest {
    private TestCerts certs;
    private SSLContext ours0;
    private SSLContext ours1;
    private SSLContext strangers;
    private TestRings ring;

    @BeforeAll
    void form() throws Exception {
        certs = TestCerts.shared();
        ours0 = certs.worker0.context();
        ours1 = certs.worker1.context();
        strangers = certs.stranger.context();
        ring = TestRings.planes(4, "tls-job", r -> tls(r % 2 == 0 ? ours0 : ours1, 20));
        ring.rings.addAll(ring.onAll((rank, none) -> TestRings.open(ring.planes.get(rank), 1, rank, ring.peers), 30));
    }

    @AfterAll
    void close() {
        if (ring != null) {
            ring.close();
        }
    }

    private static TransportOptions tls(SSLContext context, int connectSeconds) {
        return TransportOptions.builder().tls(context).connectTimeout(Duration.ofSeconds(connectSeconds)).build();
    }

    private static double input(int rank, int i) {
        return Math.sin(rank * 1_000_003.0 + i) * 1000;
    }

    @Test
    @Timeout(60)
    void allreduceOverTlsMatchesADoublePrecisionReference() throws Exception {
        // 0, 1 and an odd count; 1001 doubles (8008 bytes) take the one-hop direct path over the mesh, the
        // last (just over 3 MiB, odd) the pipelined ring.
        for (int count : new int[] {0, 1, 1001, 3 * 131072 + 7}) {
            long seq = ring.nextSeq();
            List<double[]> results = ring.onAll((rank, r) -> {
                ByteBuffer b = ByteBuffer.allocateDirect(Math.max(8, count * 8)).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < count; i++) {
                    b.putDouble(i * 8, input(rank, i));
                }
                r.allreduce(seq, b, DType.FLOAT64, count, ReduceOp.SUM);
                double[] out = new double[count];
                for (int i = 0; i < count; i++) {
                    out[i] = b.getDouble(i * 8);
                }
                return out;
            }, 60);
            for (int i = 0; i < count; i++) {
                double expected = 0;
                for (int rank = 0; rank < 4; rank++) {
                    expected += input(rank, i);
                }
                for (int rank = 0; rank < 4; rank++) {
                    assertEquals(expected, results.get(rank)[i], 1e-9, "count " + count + " element " + i + " rank " + rank);
                }
            }
            for (int rank = 1; rank < 4; rank++) {
                assertArrayEquals(results.get(0), results.get(rank), "every rank ends with the same bytes");
            }
        }
    }

    @Test
    @Timeout(60)
    void alltoallAndBroadcastOverTls() throws Exception {
        int block = 70_001; // bytes per pair: odd, several records
        long seq = ring.nextSeq();
        List<ByteBuffer> received = ring.onAll((rank, r) -> {
            ByteBuffer send = ByteBuffer.allocateDirect(4 * block);
            for (int i = 0; i < 4 * block; i++) {
                send.put(i, (byte) (rank * 31 + i));
            }
            ByteBuffer recv = ByteBuffer.allocateDirect(4 * block);
            int[] counts = {block, block, block, block};
            r.alltoall(seq, send, counts, recv, counts);
            return recv;
        }, 60);
        for (int rank = 0; rank < 4; rank++) {
            for (int from = 0; from < 4; from++) {
                for (int i = 0; i < block; i += 997) {
                    assertEquals((byte) (from * 31 + rank * block + i), received.get(rank).get(from * block + i));
                }
            }
        }
        long bseq = ring.nextSeq();
        List<Byte> last = ring.onAll((rank, r) -> {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            if (rank == 2) {
                for (int i = 0; i < b.capacity(); i++) {
                    b.put(i, (byte) i);
                }
            }
            r.broadcast(bseq, b, b.capacity(), 2);
            return b.get(b.capacity() - 1);
        }, 60);
        assertEquals(List.of((byte) -1, (byte) -1, (byte) -1, (byte) -1), last);
    }

    /**
     * Kolo's side of the TLS hot path allocates nothing; the JDK's SSLEngine does, per record (its result
     * object, the record's GCM state and, on JDK 17, a copy while it authenticates a record read from a direct
     * buffer): measured about 3 KiB per 16 KiB record on JDK 17 and 1.2 KiB on JDK 25. Bounded per record
     * here, so a regression that adds a copy of each frame or per op buffers shows.
     */
    @Test
    @Timeout(60)
    void steadyStateTlsOpsAllocateOnlyTheEnginesSmallPerRecordObjects() throws Exception {
        int ops = 200;
        int count = 64 * 1024; // 256 KiB of floats: the pipelined ring, 16 records per frame
        long base = ring.reserve(2 * ops);
        List<Long> allocated = ring.onAll((rank, r) -> {
            com.sun.management.ThreadMXBean mx =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            ByteBuffer buf = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.LITTLE_ENDIAN);
            long tid = Thread.currentThread().getId();
            for (int k = 0; k < ops; k++) {
                r.allreduce(base + k, buf, DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
            }
            long before = mx.getThreadAllocatedBytes(tid);
            for (int k = ops; k < 2 * ops; k++) {
                r.allreduce(base + k, buf, DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
            }
            return mx.getThreadAllocatedBytes(tid) - before;
        }, 60);
        // Per op and rank: 2 * 3/4 of 256 KiB sent and as much received, in records of at most 16 KiB.
        long records = 2 * 2 * (3 * 256 / 4) / 16 + 2 * 2 * 3; // data records, plus one short last record per frame
        for (long bytes : allocated) {
            long perRecord = bytes / ops / records;
            System.out.println("TLS allocation: " + bytes / ops + " bytes per op, ~" + perRecord + " per record");
            assertTrue(perRecord < 4096, "allocated " + bytes + " bytes over " + ops + " ops: " + allocated);
        }
    }

    /** Opens generation 1 on every plane; @return each rank's failure, or null where it formed */
    private static List<Throwable> openAll(TestRings t, int seconds) throws Exception {
        List<Future<GenerationDataPlane>> fs = t.submitAll((rank, none) -> TestRings.open(t.planes.get(rank), 1, rank, t.peers));
        List<Throwable> failures = new ArrayList<>();
        for (Future<GenerationDataPlane> f : fs) {
            try {
                t.rings.add(f.get(seconds, TimeUnit.SECONDS));
                failures.add(null);
            } catch (ExecutionException e) {
                failures.add(e.getCause());
            }
        }
        return failures;
    }

    @Test
    void aCertificateOfAnotherCaIsRefusedOnBothSides() throws Exception {
        long t0 = System.nanoTime();
        try (LogCapture log = LogCapture.start();
                TestRings t = TestRings.planes(2, "tls-job", r -> tls(r == 0 ? ours0 : strangers, 5))) {
            List<Throwable> failures = openAll(t, 30);
            for (int rank = 0; rank < 2; rank++) {
                Throwable f = failures.get(rank);
                assertInstanceOf(KoloException.class, f, "rank " + rank);
                String m = f.getMessage();
                assertTrue(m.contains("TLS with rank " + (1 - rank)) && m.contains("KOLO_TLS_CA"), m);
            }
            log.await(l -> l.contains("WARN") && l.contains("refusing a connection from") && l.contains("TLS"), 10);
        }
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "refused in bounded time");
    }

    @Test
    void aPeerWithoutTlsAndAWorkerWithTlsRefuseEachOther() throws Exception {
        try (LogCapture log = LogCapture.start();
                TestRings t = TestRings.planes(2, "tls-job", r -> r == 0
                        ? TransportOptions.builder().connectTimeout(Duration.ofSeconds(3)).build() : tls(ours1, 3))) {
            List<Throwable> failures = openAll(t, 30);
            String plain = failures.get(0).getMessage();
            String secured = failures.get(1).getMessage();
            assertTrue(plain.contains("refused the data connection") && plain.contains("requires TLS")
                    && plain.contains("KOLO_TLS_CERT"), plain);
            assertTrue(secured.contains("TLS with rank 0") && secured.contains("runs without TLS"), secured);
            log.await(l -> l.contains("WARN") && l.contains("the peer sent plaintext"), 10);
            log.await(l -> l.contains("WARN") && l.contains("the peer speaks TLS but this worker has no TLS"), 10);
        }
    }

    @Test
    void garbageAndSilenceInsteadOfTlsAreClosed() throws Exception {
        try (LogCapture log = LogCapture.start();
                TestRings t = TestRings.planes(1, "tls-job", r -> tls(ours0, 2))) {
            PeerAddress to = t.peers.get(0);
            Random random = new Random(7);
            // Text that is no TLS record at all: refused at once.
            byte[] junk = new byte[300];
            java.util.Arrays.fill(junk, (byte) 'G');
            assertClosedAfter(to, junk);
            log.await(l -> l.contains("refusing a connection from") && l.contains("TLS failed"), 10);
            // A TLS handshake record header followed by junk: refused, or closed at the greeting deadline.
            random.nextBytes(junk);
            junk[0] = 0x16;
            junk[1] = 3;
            junk[2] = 3;
            assertClosedAfter(to, junk);

            // A real handshake with a trusted certificate, then a forged application-data record.
            Thread.sleep(200); // let the refusal of the junk above be logged first
            int before = log.lines(l -> l.contains("TLS failed")).size();
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(to.host(), to.port()))) {
                ch.configureBlocking(false);
                TlsWire w = TlsWire.client(ch, ours1, to.host(), to.port());
                Io.handshake(w, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
                byte[] forged = new byte[5 + 64];
                random.nextBytes(forged);
                forged[0] = 0x17;
                forged[1] = 3;
                forged[2] = 3;
                forged[3] = 0;
                forged[4] = 64;
                Io.writeFully(ch, ByteBuffer.wrap(forged), System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
                assertClosed(w);
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (log.lines(l -> l.contains("TLS failed")).size() <= before && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertTrue(log.lines(l -> l.contains("TLS failed")).size() > before, "the forged record is logged: " + log.all());

            // Silence: connected, never a ClientHello; the greeting deadline (2 s here) closes it.
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(to.host(), to.port()))) {
                ch.configureBlocking(false);
                assertClosed(new PlainWire(ch));
            }
            log.await(l -> l.contains("no complete TLS handshake from"), 10);
        }
    }

    @Test
    void aPeerThatNeverFinishesTheHandshakeIsAnErrorNamingIt() throws Exception {
        try (ServerSocketChannel mute = ServerSocketChannel.open();
                TestRings t = TestRings.planes(1, "tls-job", r -> tls(ours0, 2))) {
            mute.bind(new InetSocketAddress("127.0.0.1", 0), 4); // accepts in the backlog, never answers
            PeerAddress silent = new PeerAddress("127.0.0.1", mute.socket().getLocalPort());
            long t0 = System.nanoTime();
            WorkerLostException e = org.junit.jupiter.api.Assertions.assertThrows(WorkerLostException.class,
                    () -> TestRings.open(t.planes.get(0), 1, 0, List.of(t.peers.get(0), silent)));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(6), "bounded by the connect timeout");
            assertTrue(e.getMessage().contains("to rank 1 (" + silent + ")") && e.getMessage().contains("TLS handshake"),
                    e.getMessage());
            assertEquals(1, e.lostRank());
        }
    }

    private static void assertClosedAfter(PeerAddress to, byte[] bytes) throws IOException {
        try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(to.host(), to.port()))) {
            ch.configureBlocking(false);
            Io.writeFully(ch, ByteBuffer.wrap(bytes), System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            assertClosed(new PlainWire(ch));
        }
    }

    /** Reads until the peer closes (an alert may come first); fails if that takes more than 5 s. */
    private static void assertClosed(Wire w) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        ByteBuffer sink = ByteBuffer.allocate(4096);
        try {
            while (true) {
                sink.clear();
                Io.readFully(w, sink, deadline);
            }
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("the connection is still open after 5 s");
        } catch (IOException e) {
            assertNotNull(e.getMessage()); // closed (end of stream, reset, or a TLS alert)
        }
    }
}
