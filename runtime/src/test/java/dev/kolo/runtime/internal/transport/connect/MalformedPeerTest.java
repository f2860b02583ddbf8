package dev.kolo.runtime.internal.transport.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane;
import dev.kolo.runtime.internal.collectives.generation.TestRings;
import dev.kolo.runtime.internal.transport.Frame;
import dev.kolo.runtime.internal.transport.RingProtocolException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real data plane (rank 0) against a hand-written rank 1 that greets correctly and then sends malformed
 * frames: the op fails at once with a protocol error naming the peer and the field, no memory is sized by
 * the forged length, and the worker's acceptor goes on serving.
 */
@Timeout(30)
class MalformedPeerTest {
    private static final String JOB = "malformed-peer";
    private static final long GENERATION = 1;
    /** Far above what these tests may take: failing at once must not depend on the progress deadline. */
    private static final Duration PROGRESS = Duration.ofSeconds(20);

    private Endpoint plane;
    private ServerSocketChannel fakeListener;
    private SocketChannel fromRank0;
    private SocketChannel toRank0;
    private GenerationDataPlane ring;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "malformed-peer-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeEach
    void formRingWithFakePeer() throws Exception {
        plane = Endpoint.start(Endpoint.bindEphemeral("127.0.0.1"), JOB,
                // The hand-written peer speaks TCP frames only: no shared-memory offer between the two.
                TransportOptions.builder().progressTimeout(PROGRESS).connectTimeout(Duration.ofSeconds(10))
                        .sharedMemory(false).build());
        fakeListener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        List<PeerAddress> peers = List.of(new PeerAddress("127.0.0.1", plane.port()),
                new PeerAddress("127.0.0.1", ((InetSocketAddress) fakeListener.getLocalAddress()).getPort()));
        Future<GenerationDataPlane> opened = pool.submit(() -> TestRings.open(plane, GENERATION, 0, peers));
        // Rank 0 connects to its right neighbour (us) and greets: read its hello, accept it.
        fromRank0 = fakeListener.accept();
        ByteBuffer fixed = readFully(fromRank0, Handshake.HELLO_FIXED_BYTES);
        readFully(fromRank0, Handshake.helloTextLength(fixed));
        fromRank0.write(Handshake.encodeAck(Handshake.ACCEPTED, GENERATION, 1, ""));
        // We connect to rank 0 as its left neighbour and wait for its ack.
        toRank0 = SocketChannel.open(new InetSocketAddress("127.0.0.1", plane.port()));
        toRank0.write(Handshake.encodeHello(new Handshake.Hello(Handshake.KIND_RING, GENERATION, 0, 1, 0, 2, JOB)));
        ByteBuffer ack = readFully(toRank0, Handshake.ACK_FIXED_BYTES);
        readFully(toRank0, Handshake.ackTextLength(ack));
        assertEquals(Handshake.ACCEPTED, ack.getShort(6));
        ring = opened.get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws IOException {
        if (ring != null) {
            ring.close();
        }
        plane.close();
        fakeListener.close();
        toRank0.close();
        fromRank0.close();
        pool.shutdownNow();
    }

    private static ByteBuffer readFully(SocketChannel ch, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("closed");
            }
        }
        return b.flip();
    }

    private static ByteBuffer header(long generation, long seq, int chunk, int length) {
        return ByteBuffer.allocate(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(seq)
                .putInt(chunk).putInt(length).flip();
    }

    /** Rank 0 receives a 1 KiB broadcast from us (the root) after we sent {@code frame}; returns its error. */
    private RingProtocolException receiveBroadcastAfter(ByteBuffer frame) throws Exception {
        toRank0.write(frame);
        long t0 = System.nanoTime();
        RingProtocolException e = assertThrows(RingProtocolException.class,
                () -> ring.broadcast(1, ByteBuffer.allocateDirect(1024), 1024, 1));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(millis < PROGRESS.toMillis() / 2, "took " + millis + " ms: waited for the deadline");
        assertEquals(1, e.lostRank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank 1 (127.0.0.1)"), e.getMessage());
        return e;
    }

    @Test
    void wrongGenerationIsNamedBeforeThePayloadArrives() throws Exception {
        // Only the header: the payload never comes. The header alone must fail the op, not the deadline.
        RingProtocolException e = receiveBroadcastAfter(header(GENERATION + 6, 1, 0, 1024));
        assertTrue(e.getMessage().contains("frame field generation is wrong"), e.getMessage());
    }

    @Test
    void forgedLengthIsRefusedWithoutSizingAnything() throws Exception {
        long before = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
        RingProtocolException e = receiveBroadcastAfter(header(GENERATION, 1, 0, Integer.MAX_VALUE));
        assertTrue(e.getMessage().contains("frame field payload length is wrong"), e.getMessage());
        assertTrue(e.getMessage().contains(Integer.MAX_VALUE + " bytes"), e.getMessage());
        long after = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
        assertTrue(after - before < 256L << 20, "heap grew by " + (after - before) + " bytes");
    }

    @Test
    void wrongChunkAndSequenceAreNamed() throws Exception {
        assertTrue(receiveBroadcastAfter(header(GENERATION, 1, 3, 1024)).getMessage()
                .contains("frame field chunk index is wrong"));
    }

    @Test
    void theAcceptorKeepsServingAfterMalformedHellos() throws Exception {
        byte[][] hellos = {
            helloBytes(Handshake.KIND_RING, -1, 1, 0, 2),          // negative generation
            helloBytes(Handshake.KIND_RING, 2, 5, 0, 2),           // sender outside the ring
            helloBytes(Handshake.KIND_RING, 2, 0, 0, 2),           // sender is the receiver
            helloBytes(Handshake.KIND_RING, 2, 1, 0, 1 << 20),     // absurd ring size
            helloBytes((byte) 9, 2, 1, 0, 2),                       // unknown kind
        };
        for (byte[] h : hellos) {
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", plane.port()))) {
                ch.write(ByteBuffer.wrap(h));
                ch.socket().setSoTimeout(5000);
                assertEquals(-1, ch.socket().getInputStream().read(), "closed without an ack");
            }
        }
        // The acceptor lives: generation 2's ring forms with a correct hello sent after all of them.
        ring.close();
        ring = null;
        List<PeerAddress> peers = List.of(new PeerAddress("127.0.0.1", plane.port()),
                new PeerAddress("127.0.0.1", ((InetSocketAddress) fakeListener.getLocalAddress()).getPort()));
        Future<GenerationDataPlane> opened = pool.submit(() -> TestRings.open(plane, 2, 0, peers));
        try (SocketChannel out = fakeListener.accept();
                SocketChannel in = SocketChannel.open(new InetSocketAddress("127.0.0.1", plane.port()))) {
            ByteBuffer fixed = readFully(out, Handshake.HELLO_FIXED_BYTES);
            readFully(out, Handshake.helloTextLength(fixed));
            out.write(Handshake.encodeAck(Handshake.ACCEPTED, 2, 1, ""));
            in.write(Handshake.encodeHello(new Handshake.Hello(Handshake.KIND_RING, 2, 0, 1, 0, 2, JOB)));
            ByteBuffer ack = readFully(in, Handshake.ACK_FIXED_BYTES);
            readFully(in, Handshake.ackTextLength(ack));
            assertEquals(Handshake.ACCEPTED, ack.getShort(6), "the acceptor answered generation 2's hello");
            opened.get(10, TimeUnit.SECONDS).close();
        }
    }

    private static byte[] helloBytes(byte kind, long generation, int sender, int receiver, int size) {
        byte[] job = JOB.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(Handshake.HELLO_FIXED_BYTES + job.length);
        b.putInt(Handshake.MAGIC).putShort(Handshake.VERSION).put(kind).put((byte) 0).putLong(generation)
                .putInt(sender).putInt(receiver).putInt(size).putShort((short) job.length).put(job);
        return b.array();
    }

    @Test
    void malformedAckIsRefused() {
        ByteBuffer fixed = ByteBuffer.allocate(Handshake.ACK_FIXED_BYTES).putInt(Handshake.MAGIC)
                .putShort(Handshake.VERSION).putShort((short) 7).putLong(1).putInt(0).putShort((short) 0).flip();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Handshake.decodeAck(fixed, ByteBuffer.allocate(0)));
        assertTrue(e.getMessage().contains("status"), e.getMessage());
        ByteBuffer longReason = ByteBuffer.allocate(Handshake.ACK_FIXED_BYTES).putInt(Handshake.MAGIC)
                .putShort(Handshake.VERSION).putShort(Handshake.ACCEPTED).putLong(1).putInt(0).putShort((short) -1)
                .flip();
        assertInstanceOf(IllegalArgumentException.class,
                assertThrows(IllegalArgumentException.class, () -> Handshake.ackTextLength(longReason)));
    }
}
