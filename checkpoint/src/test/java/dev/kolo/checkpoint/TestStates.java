package dev.kolo.checkpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;

/** Deterministic states whose content is a function of the step, so a restore can be checked exactly. */
public final class TestStates {
    private TestStates() {
    }

    /** @return {@code tensors} INT64 tensors of {@code bytesEach} bytes, filled from {@code step} */
    public static CheckpointState state(long step, int tensors, int bytesEach) {
        return state(step, buffers(tensors, bytesEach));
    }

    /** @return direct buffers to build states on with {@link #state(long, List)} */
    public static List<ByteBuffer> buffers(int tensors, int bytesEach) {
        List<ByteBuffer> out = new ArrayList<>();
        for (int i = 0; i < tensors; i++) {
            out.add(ByteBuffer.allocateDirect(bytesEach / 8 * 8).order(ByteOrder.LITTLE_ENDIAN));
        }
        return out;
    }

    /** Fills {@code buffers} with the content of {@code step} and wraps them (no copy) into a state. */
    public static CheckpointState state(long step, List<ByteBuffer> buffers) {
        CheckpointState.Builder b = CheckpointState.builder(step).epoch(step / 10).generation(1).worldSize(4)
                .scalar("step.copy", step).scalar("lr", 0.5 / (step + 1)).scalar("note", "step " + step)
                .metadataJson("{\"model\":\"test\",\"step\":" + step + "}");
        for (int i = 0; i < buffers.size(); i++) {
            ByteBuffer buf = buffers.get(i);
            fill(buf, step, i);
            b.tensor("t" + i, Tensor.wrap(DType.INT64, buf, buf.capacity() / 8));
        }
        return b.build();
    }

    public static void fill(ByteBuffer buf, long step, int index) {
        LongBuffer l = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
        for (int j = 0; l.hasRemaining(); j++) {
            l.put(value(step, index, j));
        }
    }

    public static long value(long step, int index, int j) {
        return step * 1_000_003L + index * 7_919L + j;
    }

    /**
     * The image a synchronous save of {@code state} stores, for tests of a store in another package
     * (the factory is package-private: only the checkpointer makes images).
     */
    public static CheckpointImage image(CheckpointState state, String job) {
        return CheckpointImage.ofTensors(state, job);
    }

    /** Asserts that {@code state} is exactly what {@link #state} made for its step. */
    public static void assertContent(CheckpointState state, int tensors, int bytesEach) {
        long step = state.step();
        assertEquals(step, state.longValue("step.copy"));
        assertEquals(0.5 / (step + 1), state.doubleValue("lr"));
        assertEquals("step " + step, state.stringValue("note"));
        assertEquals("{\"model\":\"test\",\"step\":" + step + "}", state.metadataJson());
        assertEquals(tensors, state.tensors().size());
        for (int i = 0; i < tensors; i++) {
            Tensor t = state.tensor("t" + i);
            assertEquals(DType.INT64, t.dtype());
            assertEquals(bytesEach / 8, t.numElements());
            LongBuffer l = t.buffer().asLongBuffer();
            for (int j = 0; l.hasRemaining(); j++) {
                long v = l.get();
                if (v != value(step, i, j)) {
                    assertEquals(value(step, i, j), v, "tensor t" + i + " element " + j + " of step " + step);
                }
            }
        }
    }
}
