package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kolo.runtime.ControlMessage.Assignment;
import dev.kolo.runtime.ControlMessage.BarrierEnter;
import dev.kolo.runtime.ControlMessage.BarrierRelease;
import dev.kolo.runtime.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.ControlMessage.Hello;
import dev.kolo.runtime.ControlMessage.HelloReply;
import dev.kolo.runtime.ControlMessage.MembersChanged;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ControlCodecTest {
    private final ControlCodec codec = new ControlCodec();
    private final WorkerInfo worker = new WorkerInfo("node-ü", "10.1.2.3", 7070, 4242, 3, 1, 0, 2);

    @Test
    void everyMessageSurvivesTheWire() {
        List<ControlMessage> all = List.of(
                new Hello(worker, 7),
                new HelloReply(false, "job is full", 3, List.of("a pid 1", "b pid 2")),
                new Assignment(9, "coord", List.of(worker, worker.withRanks(0, 0, 1))),
                new CoordinatorAnnounce(10, "coord-2"),
                new BarrierEnter(9, 2, 41),
                new BarrierRelease(9, 41),
                new MembersChanged(List.of("x", "y"), List.of("z")));
        for (ControlMessage m : all) {
            Buffer wire = Buffer.buffer().appendString("prefix");
            codec.encodeToWire(wire, m);
            assertEquals(m, codec.decodeFromWire(6, wire));
        }
    }

    @Test
    void truncatedOrForgedMessagesAreRejected() {
        Buffer wire = Buffer.buffer();
        codec.encodeToWire(wire, new Assignment(1, "c", List.of(worker)));
        for (int cut = 0; cut < wire.length(); cut++) {
            Buffer truncated = wire.getBuffer(0, cut);
            assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, truncated));
        }
        Buffer unknownType = Buffer.buffer().appendInt(1).appendByte((byte) 99);
        assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, unknownType));
        Buffer hugeLength = Buffer.buffer().appendInt(Integer.MAX_VALUE).appendByte((byte) 1);
        assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, hugeLength));
    }

    @Test
    void randomBytesNeverDecodeIntoSomethingUnbounded() {
        Random random = new Random(42);
        for (int i = 0; i < 20_000; i++) {
            byte[] bytes = new byte[random.nextInt(64)];
            random.nextBytes(bytes);
            Buffer b = Buffer.buffer(bytes);
            try {
                codec.decodeFromWire(0, b);
            } catch (IllegalArgumentException expected) {
                // rejected cleanly: the only acceptable failure
            }
        }
    }
}
