package dev.kolo.runtime.internal.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.control.Addressed;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlRejections;
import dev.kolo.runtime.internal.control.OpType;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Control-message tags: authentic messages open once, for their receiver only; anything else is rejected. */
class ControlAuthenticatorTest {
    private static final KoloConfig CONFIG = KoloConfig.builder().jobName("train")
            .set(Settings.JOB_SECRET, "correct horse battery staple").build();
    private static final byte[] KEY = JobKeys.of(CONFIG).controlPlane();

    private final ControlRejections rejections = new ControlRejections(null);
    private final ControlAuthenticator alice = new ControlAuthenticator(KEY, "alice", id -> id);
    private final ControlAuthenticator bob = new ControlAuthenticator(KEY, "bob", id -> id);
    private final AuthenticatingCodec aliceCodec = new AuthenticatingCodec(alice, rejections);
    private final AuthenticatingCodec bobCodec = new AuthenticatingCodec(bob, rejections);
    private final ControlMessage release = new JoinResponse(3, 0, 17, 1);

    private Buffer send(AuthenticatingCodec from, String to, ControlMessage m) {
        Buffer wire = Buffer.buffer().appendString("vertx-header");
        from.encodeToWire(wire, new Addressed(to, m));
        return wire;
    }

    private static String reason(Object decoded) {
        return assertInstanceOf(ControlAuthenticator.Rejected.class, decoded).reason();
    }

    @Test
    void authenticMessagesOpenOnceAtTheirReceiver() {
        OpResponse response = new OpResponse(3, 0, 0, OpType.ALLREDUCE, List.of(), ControlMessage.ErrorKind.NONE, "");
        for (ControlMessage m : List.of(release, response)) {
            Buffer wire = send(aliceCodec, "bob", m);
            assertEquals(m, bobCodec.decodeFromWire(12, wire));
            assertEquals("replay", reason(bobCodec.decodeFromWire(12, wire)), "the same message again");
        }
        assertEquals(2, rejections.total(), "one replay per message");
    }

    @Test
    void aMessageForAnotherNodeIsRefused() {
        Buffer wire = send(aliceCodec, "carol", release);
        assertEquals("wrong-receiver", reason(bobCodec.decodeFromWire(12, wire)));
    }

    @Test
    void everyAlteredByteBreaksTheTag() {
        Buffer wire = send(aliceCodec, "bob", release);
        for (int i = 12 + 4; i < wire.length(); i++) {
            Buffer altered = wire.copy();
            altered.setByte(i, (byte) (altered.getByte(i) ^ 0x01));
            Object decoded = bobCodec.decodeFromWire(12, altered);
            assertFalse(decoded instanceof ControlMessage, "byte " + i + " altered, yet accepted");
        }
    }

    @Test
    void anotherKeyOrNoKeyIsRefusedAndTheSecretNeverMatters() {
        byte[] otherKey = JobKeys.of(KoloConfig.builder().jobName("train").set(Settings.JOB_SECRET, "correct horse battery stapler")
                .build()).controlPlane();
        AuthenticatingCodec mallory = new AuthenticatingCodec(new ControlAuthenticator(otherKey, "mallory", id -> id),
                rejections);
        assertEquals("bad-tag", reason(bobCodec.decodeFromWire(12, send(mallory, "bob", release))));
        AuthenticatingCodec plain = new AuthenticatingCodec(null, rejections);
        assertEquals("no-tag", reason(bobCodec.decodeFromWire(12, send(plain, "bob", release))));
        assertEquals("unexpected-tag", reason(plain.decodeFromWire(12, send(aliceCodec, "bob", release))));
    }

    @Test
    void countersMayArriveSlightlyOutOfOrderButNeverTwice() {
        Buffer[] wires = new Buffer[5];
        for (int i = 0; i < wires.length; i++) {
            wires[i] = send(aliceCodec, "bob", new JoinResponse(1, 0, i, 0));
        }
        for (int i : new int[] {1, 0, 4, 2, 3}) {
            assertEquals(new JoinResponse(1, 0, i, 0), bobCodec.decodeFromWire(12, wires[i]));
        }
        for (Buffer w : wires) {
            assertEquals("replay", reason(bobCodec.decodeFromWire(12, w)));
        }
    }

    @Test
    void replayWindowForgetsNothingInsideItAndRefusesBelowIt() {
        ReplayWindow w = new ReplayWindow(new byte[16]);
        assertTrue(w.accept(5));
        assertTrue(w.accept(3));
        assertFalse(w.accept(3));
        assertTrue(w.accept(5 + ReplayWindow.SIZE));
        assertFalse(w.accept(5), "fell out of the window");
        assertTrue(w.accept(6 + 1), "inside the window, never seen");
        assertFalse(w.accept(0));
    }

    @Test
    void sealedFramesWithGarbageNeverThrow() {
        Random random = new Random(7);
        Buffer good = send(aliceCodec, "bob", release);
        for (int i = 0; i < 5000; i++) {
            Buffer b = good.copy();
            int n = 1 + random.nextInt(4);
            for (int k = 0; k < n; k++) {
                b.setByte(12 + 4 + random.nextInt(b.length() - 16), (byte) random.nextInt(256));
            }
            if (random.nextInt(4) == 0) {
                b = b.getBuffer(0, 12 + random.nextInt(b.length() - 12));
            }
            Object decoded = bobCodec.decodeFromWire(12, b);
            assertFalse(decoded instanceof ControlMessage && !decoded.equals(release), "decoded " + decoded);
        }
    }

    @Test
    void keysDependOnSecretJobAndPurpose() {
        JobKeys a = JobKeys.of(CONFIG);
        JobKeys sameAgain = JobKeys.of(CONFIG.toBuilder().build());
        JobKeys otherJob = JobKeys.of(CONFIG.toBuilder().jobName("eval").build());
        assertEquals(java.util.HexFormat.of().formatHex(a.controlPlane()),
                java.util.HexFormat.of().formatHex(sameAgain.controlPlane()));
        assertFalse(java.util.Arrays.equals(a.controlPlane(), a.dataPlane()));
        assertFalse(java.util.Arrays.equals(a.controlPlane(), otherJob.controlPlane()));
        assertTrue(a.clusterName().startsWith("train-"));
        assertNotEquals(a.clusterName(), JobKeys.of(CONFIG.toBuilder().set(Settings.JOB_SECRET, "another secret of length")
                .build()).clusterName());
        assertEquals(null, JobKeys.of(KoloConfig.builder().build()));
    }
}
