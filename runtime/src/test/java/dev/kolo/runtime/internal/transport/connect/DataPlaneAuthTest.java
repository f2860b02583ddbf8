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
import dev.kolo.runtime.internal.collectives.generation.TestRings;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.PlainWire;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Data connections of a job with a secret: both sides prove the key before a connection serves a ring;
 * forged, replayed, reflected or missing proofs are refused and logged, and the real ring still forms.
 */
@Timeout(60)
class DataPlaneAuthTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes();
    private static final byte[] OTHER_KEY = "fedcba9876543210fedcba9876543210".getBytes();

    private static TransportOptions keyed(byte[] key) {
        return TransportOptions.builder().authenticationKey(key).build();
    }

    /** A raw client that sends a hello (with {@code nonce} when not null) and reads the acceptor's answer. */
    private static final class Client implements AutoCloseable {
        final SocketChannel ch;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        final byte[] hello;

        Client(PeerAddress to, Handshake.Hello h, byte[] nonce) throws IOException {
            ch = SocketChannel.open(new InetSocketAddress(to.host(), to.port()));
            ch.configureBlocking(false);
            ByteBuffer b = Handshake.encodeHello(h, nonce);
            hello = Arrays.copyOf(b.array(), b.limit());
            Io.writeFully(ch, b, deadline);
        }

        Handshake.Ack ack() throws IOException {
            return Greeter.readAck(new PlainWire(ch), deadline);
        }

        /** @return the acceptor's nonce and proof following a challenge */
        byte[][] challenge() throws IOException {
            Handshake.Ack ack = ack();
            assertEquals(Handshake.CHALLENGE, ack.status(), ack.reason());
            ByteBuffer extra = ByteBuffer.allocate(Handshake.CHALLENGE_EXTRA_BYTES);
            Io.readFully(ch, extra, deadline);
            byte[] all = extra.array();
            return new byte[][] {Arrays.copyOf(all, HandshakeAuth.NONCE_BYTES),
                    Arrays.copyOfRange(all, HandshakeAuth.NONCE_BYTES, all.length)};
        }

        void send(byte[] bytes) throws IOException {
            Io.writeFully(ch, ByteBuffer.wrap(bytes), deadline);
        }

        /** @return true when the acceptor closes the connection without sending anything more */
        boolean closedByPeer() throws IOException {
            ByteBuffer one = ByteBuffer.allocate(1);
            try {
                Io.readFully(ch, one, deadline);
                return false;
            } catch (java.io.EOFException e) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private static byte[] nonce() {
        return new HandshakeAuth(KEY).nonce();
    }

    private static Handshake.Hello ringHello(String job, long generation) {
        return new Handshake.Hello(Handshake.KIND_RING, generation, 0, 1, 0, 2, job);
    }

    /** Forms the ring of {@code generation} on every rank and checks one allreduce: the real ring is unaffected. */
    private static void ringStillWorks(TestRings c, long generation) throws Exception {
        c.rings.addAll(c.onAll((rank, ring) -> TestRings.open(c.planes.get(rank), generation, rank, c.peers), 20));
        long seq = c.nextSeq();
        List<Float> sums = c.onAll((rank, ring) -> {
            ByteBuffer b = Elements.direct(4 * 1000);
            for (int i = 0; i < 1000; i++) {
                b.putFloat(4 * i, rank + i);
            }
            ring.allreduce(seq, b, DType.FLOAT32, 1000, ReduceOp.SUM);
            return b.getFloat(4 * 999);
        }, 20);
        float expected = 0;
        for (int r = 0; r < c.size; r++) {
            expected += r + 999;
        }
        for (float s : sums) {
            assertEquals(expected, s);
        }
    }

    @Test
    void ringOfAJobWithASecretFormsAndComputes() throws Exception {
        try (TestRings c = TestRings.planes(4, "job", keyed(KEY))) { // 4 ranks: ring and direct connections
            ringStillWorks(c, 1);
        }
    }

    @Test
    void helloWithoutProofIsRefusedWithAReasonAndLogged() throws Exception {
        try (TestRings c = TestRings.planes(2, "job", keyed(KEY)); LogCapture log = LogCapture.start()) {
            Handshake.Ack ack;
            String local;
            try (Client attacker = new Client(c.peers.get(0), ringHello("job", 1), null)) {
                local = attacker.ch.getLocalAddress().toString();
                ack = attacker.ack();
            }
            assertEquals(Handshake.REJECTED, ack.status());
            assertTrue(ack.reason().contains("no proof") && ack.reason().contains("KOLO_JOB_SECRET"), ack.reason());
            String line = log.await(l -> l.contains("WARN") && l.contains("refusing") && l.contains("no proof"), 5);
            assertTrue(line.contains(local.replace("localhost", "")), "names the remote address: " + line);
            ringStillWorks(c, 1);
        }
    }

    @Test
    void wrongProofIsRefusedWithoutAnswerAndLogged() throws Exception {
        try (TestRings c = TestRings.planes(2, "job", keyed(KEY)); LogCapture log = LogCapture.start()) {
            try (Client attacker = new Client(c.peers.get(0), ringHello("job", 1), nonce())) {
                byte[][] challenge = attacker.challenge();
                // Proof under a key guessed wrong.
                attacker.send(HandshakeAuth.connectorProof(new HandshakeAuth(OTHER_KEY).mac(), challenge[0],
                        attacker.hello));
                assertTrue(attacker.closedByPeer());
            }
            log.await(l -> l.contains("WARN") && l.contains("wrong proof") && l.contains("127.0.0.1"), 5);
            ringStillWorks(c, 1);
        }
    }

    @Test
    void reflectedAndReplayedProofsAreRefused() throws Exception {
        try (TestRings c = TestRings.planes(2, "job", keyed(KEY)); LogCapture log = LogCapture.start()) {
            // Reflection: the acceptor's own proof sent back as the connector's.
            try (Client attacker = new Client(c.peers.get(0), ringHello("job", 1), nonce())) {
                byte[][] challenge = attacker.challenge();
                attacker.send(challenge[1]);
                assertTrue(attacker.closedByPeer());
            }
            // Replay: a proof that was right for one connection (computed here with the key, as a real peer
            // would) is sent again, with the same hello, on a second connection.
            byte[] n = nonce();
            byte[] recorded;
            try (Client peer = new Client(c.peers.get(0), ringHello("job", 7), n)) {
                byte[][] challenge = peer.challenge();
                recorded = HandshakeAuth.connectorProof(new HandshakeAuth(KEY).mac(), challenge[0], peer.hello);
                peer.send(recorded); // accepted and parked for generation 7
            }
            try (Client replay = new Client(c.peers.get(0), ringHello("job", 7), n)) {
                replay.challenge(); // a fresh nonce: the recorded proof no longer fits
                replay.send(recorded);
                assertTrue(replay.closedByPeer());
            }
            assertEquals(2, log.lines(l -> l.contains("WARN") && l.contains("wrong proof")).size(), log.all());
            ringStillWorks(c, 8);
        }
    }

    @Test
    void peerWithAnotherSecretCannotJoinTheRing() throws Exception {
        try (TestRings good = TestRings.planes(1, "job", keyed(KEY));
             TestRings bad = TestRings.planes(1, "job", keyed(OTHER_KEY))) {
            List<PeerAddress> peers = List.of(good.peers.get(0), bad.peers.get(0));
            // The impostor is rank 1: it connects to rank 0 and finds rank 0's proof wrong.
            KoloException e = assertThrows(KoloException.class, () -> TestRings.open(bad.planes.get(0), 1, 1, peers));
            assertTrue(e.getMessage().contains("failed to prove") && e.getMessage().contains("KOLO_JOB_SECRET"),
                    e.getMessage());
        }
    }

    @Test
    void peersWithAndWithoutASecretRefuseEachOther() throws Exception {
        try (TestRings keyed = TestRings.planes(1, "job", keyed(KEY));
             TestRings plain = TestRings.planes(1, "job", TransportOptions.builder()
                     .connectTimeout(Duration.ofSeconds(3)).build())) {
            // A worker with a secret connecting to one without.
            List<PeerAddress> peers = List.of(plain.peers.get(0), keyed.peers.get(0));
            KoloException e = assertThrows(KoloException.class, () -> TestRings.open(keyed.planes.get(0), 1, 1, peers));
            assertTrue(e.getMessage().contains("refused") && e.getMessage().contains("has none"), e.getMessage());
            // A worker without one connecting to a job with one.
            List<PeerAddress> reversed = List.of(keyed.peers.get(0), plain.peers.get(0));
            KoloException f = assertThrows(KoloException.class, () -> TestRings.open(plain.planes.get(0), 2, 1, reversed));
            assertTrue(f.getMessage().contains("no proof"), f.getMessage());
        }
    }

    @Test
    void silentPeerIsClosedAtTheHandshakeDeadline() throws Exception {
        TransportOptions options = TransportOptions.builder().authenticationKey(KEY)
                .connectTimeout(Duration.ofSeconds(1)).build();
        try (TestRings c = TestRings.planes(1, "job", options); LogCapture log = LogCapture.start()) {
            try (Client slow = new Client(c.peers.get(0), ringHello("job", 1), nonce())) {
                slow.challenge();
                long t0 = System.nanoTime();
                assertTrue(slow.closedByPeer(), "never sends its proof: closed");
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(4));
            }
            log.await(l -> l.contains("WARN") && l.contains("no complete hello"), 5);
            assertFalse(log.all().contains(new String(KEY)), "the key never appears in the log");
        }
    }
}
