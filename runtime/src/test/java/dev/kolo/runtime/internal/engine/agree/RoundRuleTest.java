package dev.kolo.runtime.internal.engine.agree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.autotune.TunedValues;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The combination of two round messages: messages that say the same but for their holders and data (every rank
 * has the same tensors ready, the steady state) take a shortcut, which must give what the general rule gives.
 */
class RoundRuleTest {
    private static final int SIZE = 2;
    private static final int WORDS = 2;
    private static final int EAGER = 64 * 1024;

    private final TensorCache cache = new TensorCache(1024);
    private final RoundRule rule = new RoundRule(cache, new KernelReducer(dev.kolo.kernels.Kernels.java()), SIZE,
            new Tuning(new TunedValues(1 << 20, EAGER, 1000), null, null, null));
    /** Cache ids: a float32 of 3 elements, a float64 of 2, and one the messages mark ready without data. */
    private final int f32;
    private final int f64;
    private final int big;

    RoundRuleTest() {
        f32 = cache.insert(spec("a", DType.FLOAT32, 3), id -> { });
        f64 = cache.insert(spec("b", DType.FLOAT64, 2), id -> { });
        big = cache.insert(spec("c", DType.FLOAT32, 1 << 20), id -> { });
        rule.startRound(WORDS);
    }

    private static OpSpec spec(String name, DType dtype, long elements) {
        return new OpSpec(name, OpType.ALLREDUCE, dtype, new long[] {elements}, ReduceOp.SUM, 1, 1, 0, null);
    }

    @Test
    void alikeMessagesCombineAsTheGeneralRuleDoes() {
        ByteBuffer lower = message(0, 1f, 10.0, false);
        ByteBuffer upper = message(1, 2f, 20.0, false);
        ByteBuffer fast = out();
        int fastLength = rule.combine(lower, lower.limit(), 0, upper, upper.limit(), 1, fast);
        // The same content with the upper's ready set written dense (longer, so never written so): the general rule.
        ByteBuffer denseUpper = message(1, 2f, 20.0, true);
        ByteBuffer general = out();
        int generalLength = rule.combine(lower, lower.limit(), 0, denseUpper, denseUpper.limit(), 1, general);

        assertEquals(generalLength, fastLength);
        assertEquals(general.slice(0, generalLength), fast.slice(0, fastLength), "the same bytes either way");
        assertEquals(3L, fast.getLong(RoundMessage.HOLDERS), "both ranks hold the same responses");
        long[] ready = new long[WORDS];
        long[] invalid = new long[WORDS];
        long[] eager = new long[WORDS];
        int at = RoundMessage.readSet(fast, RoundMessage.setsAt(SIZE), fastLength, ready, WORDS);
        at = RoundMessage.readSet(fast, at, fastLength, invalid, WORDS);
        at = RoundMessage.readSet(fast, at, fastLength, eager, WORDS);
        assertArrayEquals(bits(f32, f64, big), ready);
        assertArrayEquals(bits(), invalid);
        assertArrayEquals(bits(f32, f64), eager);
        for (int i = 0; i < 3; i++) {
            assertEquals(3f * (i + 1), fast.getFloat(at + 4 * i), "float32 element " + i);
        }
        for (int i = 0; i < 2; i++) {
            assertEquals(30.0 * (i + 1), fast.getDouble(at + 12 + 8 * i), "float64 element " + i);
        }
        assertEquals(at + 12 + 16, fastLength);
    }

    @Test
    void alikeMessagesCombineInPlaceAsIntoAThirdBuffer() {
        ByteBuffer upper = message(1, 2f, 20.0, false);
        ByteBuffer expected = out();
        ByteBuffer lower = message(0, 1f, 10.0, false);
        int expectedLength = rule.combine(lower, lower.limit(), 0, upper, upper.limit(), 1, expected);

        int length = rule.combineInPlace(lower, lower.limit(), 0, upper, upper.limit(), 1);
        assertEquals(expectedLength, length);
        assertEquals(expected.slice(0, expectedLength), lower.slice(0, length), "the same bytes, over the lower");
        assertEquals(message(1, 2f, 20.0, false), upper, "the upper message is only read");
    }

    @Test
    void messagesThatDifferInTheirSetsAreNotCombinedInPlace() {
        ByteBuffer lower = message(0, 1f, 10.0, false);
        ByteBuffer denseUpper = message(1, 2f, 20.0, true);
        assertEquals(-1, rule.combineInPlace(lower, lower.limit(), 0, denseUpper, denseUpper.limit(), 1));
        assertEquals(message(0, 1f, 10.0, false), lower, "left as it was, for the general rule");
    }

    @Test
    void messagesReadyForDifferentTensorsAgreeOnWhatBothHave() {
        ByteBuffer lower = message(0, 1f, 10.0, false);
        ByteBuffer upper = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
        header(upper, 1);
        int at = RoundMessage.writeSet(upper, RoundMessage.setsAt(SIZE), bits(f64), WORDS);
        at = RoundMessage.writeSet(upper, at, bits(), WORDS);
        at = RoundMessage.writeSet(upper, at, bits(f64), WORDS);
        upper.putDouble(at, 5.0).putDouble(at + 8, 5.0);
        upper.limit(at + 16);
        ByteBuffer out = out();
        int length = rule.combine(lower, lower.limit(), 0, upper, upper.limit(), 1, out);
        long[] ready = new long[WORDS];
        long[] eager = new long[WORDS];
        int pos = RoundMessage.readSet(out, RoundMessage.setsAt(SIZE), length, ready, WORDS);
        pos = RoundMessage.readSet(out, pos, length, new long[WORDS], WORDS);
        pos = RoundMessage.readSet(out, pos, length, eager, WORDS);
        assertArrayEquals(bits(f64), ready);
        assertArrayEquals(bits(f64), eager);
        assertEquals(15.0, out.getDouble(pos));
        assertEquals(25.0, out.getDouble(pos + 8));
    }

    @Test
    void alikeMessagesCutShortAreRefused() {
        ByteBuffer lower = message(0, 1f, 10.0, false);
        ByteBuffer upper = message(1, 2f, 20.0, false);
        KoloException e = assertThrows(KoloException.class,
                () -> rule.combine(lower, lower.limit(), 0, upper, upper.limit() - 8, 1, out()));
        assertTrue(e.getMessage().contains("ends before the data of 'b'"), e.getMessage());
    }

    /** Rank {@code rank}'s message: all three ready, the two small ones' data (element i of each is i + 1 times). */
    private ByteBuffer message(int rank, float f, double d, boolean denseReady) {
        ByteBuffer b = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
        header(b, rank);
        int at = RoundMessage.setsAt(SIZE);
        if (denseReady) {
            long[] ready = bits(f32, f64, big);
            b.putInt(at, -1).putLong(at + 4, ready[0]).putLong(at + 12, ready[1]);
            at += 4 + 8 * WORDS;
        } else {
            at = RoundMessage.writeSet(b, at, bits(f32, f64, big), WORDS);
        }
        at = RoundMessage.writeSet(b, at, bits(), WORDS);
        at = RoundMessage.writeSet(b, at, bits(f32, f64), WORDS);
        for (int i = 0; i < 3; i++) {
            b.putFloat(at + 4 * i, f * (i + 1));
        }
        for (int i = 0; i < 2; i++) {
            b.putDouble(at + 12 + 8 * i, d * (i + 1));
        }
        return b.limit(at + 12 + 16);
    }

    private static void header(ByteBuffer b, int rank) {
        b.putInt(RoundMessage.FLAGS, 0).putInt(RoundMessage.WORDS, WORDS).putLong(RoundMessage.RECEIVED, 4)
                .putInt(RoundMessage.TUNE_VERSION, 0).putInt(RoundMessage.TUNE_FUSION, 1 << 20)
                .putInt(RoundMessage.TUNE_EAGER, EAGER).putInt(RoundMessage.TUNE_CYCLE, 1000)
                .putLong(RoundMessage.HOLDERS, 1L << rank);
    }

    private static long[] bits(int... ids) {
        long[] bits = new long[WORDS];
        for (int id : ids) {
            bits[id >>> 6] |= 1L << id;
        }
        return bits;
    }

    private static ByteBuffer out() {
        return ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    }
}
