package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.internal.control.ControlMessage.Hello;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.control.ControlMessage.MembersChanged;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ControlCodecTest {
    private final ControlCodec codec = new ControlCodec();
    private final WorkerInfo worker = new WorkerInfo("node-ü", "10.1.2.3", 7070, 9404, 4242, 3, 1, 0, 2, "0-3,6");

    @Test
    void everyMessageSurvivesTheWire() {
        List<ControlMessage> all = List.of(
                new Hello(worker, 7),
                new HelloReply(false, "job is full", 3, List.of("a pid 1", "b pid 2")),
                new Assignment(9, "coord", List.of(worker, worker.withRanks(0, 0, 1))),
                new CoordinatorAnnounce(10, "coord-2"),
                new MembersChanged(List.of("x", "y"), List.of("z")),
                new ControlMessage.OpRequest(3, new SetScope(2, List.of(4, 1)), 1, new OpSpec("grads/1", OpType.ALLREDUCE, DType.BFLOAT16,
                        new long[] {7, 3}, ReduceOp.AVERAGE, 0.5, 2, 0, null, 4), 12),
                new ControlMessage.JoinRequest(3, SetScope.GLOBAL, 1, 13),
                new ControlMessage.OpResponse(3, 2, 5, OpType.ALLGATHER, List.of(new ControlMessage.ResponseEntry("g",
                        true, new OpSpec("g", OpType.ALLGATHER, DType.INT8, new long[] {2}, ReduceOp.SUM, 1, 1, 0,
                        null), new long[] {2, 2}), new ControlMessage.ResponseEntry("h", false, null, new long[0])),
                        ControlMessage.ErrorKind.NONE, ""),
                new ControlMessage.JoinResponse(3, 0, 6, 1),
                new ControlMessage.MembershipPending(4),
                new ControlMessage.Closing(4, 3),
                new ControlMessage.RankStatus(3, 2, "{\"step\":12,\"scalars\":{\"loss\":0.5}}"));
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

    /** A message of {@code type} whose body is {@code body}, framed as the codec frames it. */
    private static Buffer frame(int type, Buffer body) {
        return Buffer.buffer().appendInt(1 + body.length()).appendByte((byte) type).appendBuffer(body);
    }

    private static Buffer str(String s) {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return Buffer.buffer().appendUnsignedShort(b.length).appendBytes(b);
    }

    private String rejection(Buffer wire) {
        return assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, wire)).getMessage();
    }

    private static void assertNames(String message, String... words) {
        for (String w : words) {
            org.junit.jupiter.api.Assertions.assertTrue(message.contains(w), message + " should name " + w);
        }
    }

    private static Buffer workerBytes(String node, int dataPort, int rank, int localRank, int localSize) {
        return Buffer.buffer().appendBuffer(str(node)).appendBuffer(str("10.0.0.1")).appendInt(dataPort)
                .appendLong(42).appendInt(-1).appendInt(rank).appendInt(localRank).appendInt(localSize);
    }

    @Test
    void outOfRangeFieldsAreRejectedByName() {
        assertNames(rejection(frame(11, Buffer.buffer().appendLong(-3).appendInt(0))), "generation", "-3");
        assertNames(rejection(frame(11, Buffer.buffer().appendLong(1).appendInt(0).appendInt(70_000))), "rank",
                "70000");
        assertNames(rejection(frame(12, Buffer.buffer().appendLong(1).appendUnsignedShort(0).appendLong(-1)
                .appendInt(0))), "sequence");
        // A process set: its ranks are ranks, listed once, and only set 0 (the whole job) lists none.
        assertNames(rejection(frame(11, Buffer.buffer().appendLong(1).appendUnsignedShort(1).appendUnsignedShort(1)
                .appendInt(70_000).appendInt(0).appendLong(0))), "set rank", "70000");
        assertNames(rejection(frame(11, Buffer.buffer().appendLong(1).appendUnsignedShort(1).appendUnsignedShort(2)
                .appendInt(3).appendInt(3).appendInt(0).appendLong(0))), "set", "rank 3 twice");
        assertNames(rejection(frame(11, Buffer.buffer().appendLong(1).appendUnsignedShort(4).appendUnsignedShort(0)
                .appendInt(0).appendLong(0))), "set", "process set 4 lists no ranks");
        assertNames(rejection(frame(1, workerBytes("n", 70_000, -1, -1, -1).appendLong(0))), "dataPort");
        assertNames(rejection(frame(1, workerBytes("", 7070, -1, -1, -1).appendLong(0))), "node", "empty");
        assertNames(rejection(frame(1, workerBytes("n", 7070, 0, 2, 2).appendLong(0))), "localRank");
        assertNames(rejection(frame(2, Buffer.buffer().appendByte((byte) 2).appendBuffer(str("")).appendInt(1)
                .appendUnsignedShort(0))), "accepted");
        // Retired types (control-plane barriers, requests by cache id) are unknown now.
        for (int retired : new int[] {5, 6, 9}) {
            assertNames(rejection(frame(retired, Buffer.buffer().appendLong(1).appendInt(0).appendInt(0))), "unknown");
        }
        Buffer badFlags = Buffer.buffer().appendLong(1).appendUnsignedShort(0).appendLong(0).appendByte((byte) 1).appendByte((byte) 0)
                .appendBuffer(str("")).appendUnsignedShort(1).appendBuffer(str("t")).appendByte((byte) 4)
                .appendUnsignedShort(0);
        assertNames(rejection(frame(10, badFlags)), "entry flags", "4");
        assertNames(rejection(frame(12, Buffer.buffer().appendLong(1).appendUnsignedShort(0).appendLong(0)
                .appendInt(-2))), "lastRank");
    }

    @Test
    void invalidUtf8IsRejected() {
        Buffer bad = Buffer.buffer().appendUnsignedShort(2).appendByte((byte) 0xC3).appendByte((byte) 0x28);
        assertNames(rejection(frame(4, Buffer.buffer().appendLong(1).appendBuffer(bad))), "UTF-8");
    }

    /** An OpRequest body with the given shape (FLOAT32 allreduce named "t"). */
    private static Buffer request(long... shape) {
        Buffer b = Buffer.buffer().appendLong(1).appendInt(0).appendInt(0).appendBuffer(str("t")).appendByte((byte) 0)
                .appendByte((byte) 0).appendByte((byte) shape.length);
        for (long d : shape) {
            b.appendLong(d);
        }
        return b.appendByte((byte) 0).appendDouble(1).appendDouble(1).appendInt(0).appendUnsignedShort(0)
                .appendUnsignedShort(0).appendLong(0); // received
    }

    @Test
    void shapesMustFitATensor() {
        assertNames(rejection(frame(8, request(1L << 40, 1L << 40))), "shape", "exceeds");
        // A zero first dim does not excuse the rest: rowElements() multiplies them.
        assertNames(rejection(frame(8, request(0, 1L << 40, 1L << 40))), "shape", "exceeds");
        assertNames(rejection(frame(8, request(-1))), "negative");
        assertNames(rejection(frame(8, request(1L << 29))), "exceeds"); // 2 GiB of float32: one byte too many
        ControlMessage ok = codec.decodeFromWire(0, frame(8, request(0, 1 << 20, 100)));
        assertEquals(3, ((ControlMessage.OpRequest) ok).spec().shape.length);
    }

    @Test
    void countsThatCannotFitTheRemainingBytesFailBeforeAllocating() {
        // 65535 workers announced, none present.
        assertNames(rejection(frame(3, Buffer.buffer().appendLong(1).appendBuffer(str("c")).appendUnsignedShort(65535))),
                "truncated");
        // 65535 strings announced in a members list, none present.
        assertNames(rejection(frame(7, Buffer.buffer().appendUnsignedShort(65535))), "truncated");
        // Negative per-rank counts in a response entry.
        Buffer response = Buffer.buffer().appendLong(1).appendUnsignedShort(0).appendLong(0).appendByte((byte) 1).appendByte((byte) 0)
                .appendBuffer(str("")).appendUnsignedShort(1).appendBuffer(str("t")).appendByte((byte) 0)
                .appendUnsignedShort(1).appendLong(-4);
        assertNames(rejection(frame(10, response)), "perRank", "-4");
    }
}
