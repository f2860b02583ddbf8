package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The argument checks and the spec reuse every collective call goes through, without allocating. */
class OpArgumentsTest {

    @Test
    void nameLengthIsCountedAsUtf8EncodesIt() {
        Random random = new Random(34);
        char[] alphabet = {'a', 'Z', '/', 'é', 'ß', '中', '\uD83D', '\uDE00', '\uDBFF', '\uDC00', '\u007F', '\u0080',
            '\u07FF', '\u0800', '\uFFFF'};
        for (int i = 0; i < 5000; i++) {
            char[] chars = new char[random.nextInt(40)];
            for (int k = 0; k < chars.length; k++) {
                chars[k] = alphabet[random.nextInt(alphabet.length)];
            }
            String s = new String(chars);
            assertEquals(s.getBytes(StandardCharsets.UTF_8).length, OpArguments.utf8Length(s), s);
        }
        String tooLong = "中".repeat(ControlCodec.MAX_STRING / 3 + 1);
        assertThrows(IllegalArgumentException.class, () -> OpArguments.requireName(tooLong));
        OpArguments.requireName("中".repeat(ControlCodec.MAX_STRING / 3));
    }

    @Test
    void anAllreduceSubmittedAgainReusesItsSpecOnlyWhenEverythingMatches() {
        Tensor t = Tensor.allocate(DType.FLOAT32, 2, 3);
        OpSpec first = OpArguments.allreduceSpec(null, "w", t, ReduceOp.SUM, 1.0, 0.5);
        assertEquals(new OpSpec("w", OpType.ALLREDUCE, DType.FLOAT32, new long[] {2, 3}, ReduceOp.SUM, 1.0, 0.5, 0,
                null), first);
        assertSame(first, OpArguments.allreduceSpec(first, "w", Tensor.allocate(DType.FLOAT32, 2, 3), ReduceOp.SUM,
                1.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", Tensor.allocate(DType.FLOAT32, 3, 2), ReduceOp.SUM,
                1.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", Tensor.allocate(DType.FLOAT32, 6), ReduceOp.SUM,
                1.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", Tensor.allocate(DType.FLOAT64, 2, 3), ReduceOp.SUM,
                1.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", t, ReduceOp.MAX, 1.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", t, ReduceOp.SUM, 2.0, 0.5));
        assertNotSame(first, OpArguments.allreduceSpec(first, "w", t, ReduceOp.SUM, 1.0, 1.0));
        assertNotSame(first, OpArguments.allreduceSpec(first, "v", t, ReduceOp.SUM, 1.0, 0.5));
        OpSpec grouped = new OpSpec("g/0", OpType.ALLREDUCE, DType.FLOAT32, new long[] {2, 3}, ReduceOp.SUM, 1.0, 1.0,
                0, null, 2);
        assertNotSame(grouped, OpArguments.allreduceSpec(grouped, "g/0", t, ReduceOp.SUM, 1.0, 1.0));
        OpSpec broadcast = new OpSpec("b", OpType.BROADCAST, DType.FLOAT32, new long[] {2, 3}, ReduceOp.SUM, 1.0, 1.0,
                0, null);
        assertNotSame(broadcast, OpArguments.allreduceSpec(broadcast, "b", t, ReduceOp.SUM, 1.0, 1.0));
    }
}
