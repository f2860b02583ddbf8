package dev.kolo.runtime.internal.transport.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.generation.Elements;
import dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane;
import dev.kolo.runtime.internal.collectives.generation.TestRings;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.PlainWire;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Connections are checked on both sides; wrong job, stale generation or wrong rank are refused. */
@Timeout(30)
class HandshakeTest {

    /** Connects like a peer would and returns the ack (or null if the connection is just closed). */
    private static Handshake.Ack greet(PeerAddress to, Handshake.Hello hello, SocketChannel[] keep) throws IOException {
        SocketChannel ch = SocketChannel.open(new InetSocketAddress(to.host(), to.port()));
        ch.configureBlocking(false);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        Io.writeFully(ch, Handshake.encodeHello(hello), deadline);
        if (keep != null) {
            keep[0] = ch;
            return null;
        }
        try {
            return Greeter.readAck(new PlainWire(ch), deadline);
        } catch (EOFException e) {
            return null;
        } finally {
            ch.close();
        }
    }

    @Test
    void wrongJobIsRefusedWithAReason() throws Exception {
        try (TestRings c = TestRings.planes(1, "job-a", TransportOptions.defaults())) {
            Handshake.Ack ack = greet(c.peers.get(0), new Handshake.Hello(Handshake.KIND_RING, 1, 0, 1, 0, 2, "job-b"), null);
            assertNotNull(ack);
            assertEquals(Handshake.REJECTED, ack.status());
            assertTrue(ack.reason().contains("job-b") && ack.reason().contains("job-a"), ack.reason());
        }
    }

    @Test
    void staleGenerationIsRefused() throws Exception {
        try (TestRings c = TestRings.planes(1, "job", TransportOptions.defaults())) {
            TestRings.open(c.planes.get(0), 5, 0, c.peers).close(); // this worker is at generation 5 now
            Handshake.Ack ack = greet(c.peers.get(0), new Handshake.Hello(Handshake.KIND_RING, 3, 0, 1, 0, 2, "job"), null);
            assertNotNull(ack);
            assertEquals(Handshake.REJECTED, ack.status());
            assertTrue(ack.reason().contains("stale"), ack.reason());
        }
    }

    @Test
    void garbageIsDroppedAndTheAcceptorKeepsWorking() throws Exception {
        try (TestRings c = TestRings.planes(2, "job", TransportOptions.defaults())) {
            PeerAddress a = c.peers.get(0);
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(a.host(), a.port()))) {
                ch.write(ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()));
                ch.socket().setSoTimeout(5000);
                assertEquals(-1, ch.socket().getInputStream().read(), "closed without an answer");
            }
            c.rings.addAll(c.onAll((rank, ring) -> TestRings.open(c.planes.get(rank), 1, rank, c.peers), 10));
            long seq = c.nextSeq();
            List<Float> sums = c.onAll((rank, ring) -> {
                ByteBuffer b = Elements.direct(4);
                b.putFloat(0, rank + 1);
                ring.allreduce(seq, b, DType.FLOAT32, 1, ReduceOp.SUM);
                return b.getFloat(0);
            }, 10);
            assertEquals(List.of(3f, 3f), sums);
        }
    }

    @Test
    void connectionForAFutureGenerationWaitsForItsOwnRing() throws Exception {
        try (TestRings c = TestRings.planes(1, "job", TransportOptions.defaults())) {
            Endpoint plane = c.planes.get(0);
            SocketChannel[] keep = new SocketChannel[1];
            greet(c.peers.get(0), new Handshake.Hello(Handshake.KIND_RING, 8, 0, 1, 0, 2, "job"), keep);
            try {
                TestRings.open(plane, 7, 0, c.peers).close();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                assertNull(plane.pending().claim(7, 0, Handshake.KIND_RING, 1, System.nanoTime()),
                        "generation 8's connection must not serve generation 7");
                PendingConnections.Parked p = plane.pending().claim(8, 0, Handshake.KIND_RING, 1, deadline);
                assertNotNull(p, "parked for generation 8");
                assertEquals(8, p.hello().generation());
                p.channel().close();
            } finally {
                keep[0].close();
            }
        }
    }

    @Test
    void helloForAnotherRankIsRefusedAndTheRightNeighbourStillConnects() throws Exception {
        try (TestRings c = TestRings.planes(2, "job", TransportOptions.defaults())) {
            // An impostor claims to be rank 1 of generation 2 but addresses rank 2 of a ring of 3. (A hello whose
            // ranks do not fit its own ring size is refused by the acceptor already: MalformedPeerTest.)
            SocketChannel[] keep = new SocketChannel[1];
            greet(c.peers.get(0), new Handshake.Hello(Handshake.KIND_RING, 2, 0, 1, 2, 3, "job"), keep);
            Thread.sleep(100); // let the acceptor park it first
            Future<GenerationDataPlane> r0 = java.util.concurrent.Executors.newSingleThreadExecutor()
                    .submit(() -> TestRings.open(c.planes.get(0), 2, 0, c.peers));
            ByteBuffer fixed = ByteBuffer.allocate(Handshake.ACK_FIXED_BYTES);
            Io.readFully(keep[0], fixed, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            fixed.flip();
            ByteBuffer text = ByteBuffer.allocate(Handshake.ackTextLength(fixed));
            Io.readFully(keep[0], text, System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
            text.flip();
            Handshake.Ack ack = Handshake.decodeAck(fixed, text);
            keep[0].close();
            assertEquals(Handshake.REJECTED, ack.status());
            assertTrue(ack.reason().contains("rank 0 of 2"), ack.reason());
            try (GenerationDataPlane r1 = TestRings.open(c.planes.get(1), 2, 1, c.peers); GenerationDataPlane ring0 = r0.get(10, TimeUnit.SECONDS)) {
                assertEquals(0, ring0.rank());
                assertEquals(1, r1.rank());
            }
        }
    }
}
