package dev.kolo.runtime.internal.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Edge semantics of the portable kernels: wrap-around, unsigned bytes, NaN, half rounding, scaling. */
class JavaReducerTest {
    private final Reducer reducer = JavaReducer.INSTANCE;

    private static ByteBuffer buf(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void integersWrapAround() {
        ByteBuffer a = buf(8);
        ByteBuffer b = buf(8);
        a.put(0, (byte) 127).put(1, (byte) 200);
        b.put(0, (byte) 1).put(1, (byte) 100);
        reducer.reduce(DType.INT8, ReduceOp.SUM, a, 0, b, 0, 1);
        assertEquals(-128, a.get(0));
        reducer.reduce(DType.UINT8, ReduceOp.SUM, a, 1, b, 1, 1);
        assertEquals(44, a.get(1) & 0xFF);
        a.putInt(4, Integer.MAX_VALUE);
        b.putInt(4, 2);
        reducer.reduce(DType.INT32, ReduceOp.PRODUCT, a, 4, b, 4, 1);
        assertEquals(-2, a.getInt(4));
        a.putLong(0, Long.MAX_VALUE);
        b.putLong(0, 1);
        reducer.reduce(DType.INT64, ReduceOp.SUM, a, 0, b, 0, 1);
        assertEquals(Long.MIN_VALUE, a.getLong(0));
    }

    @Test
    void uint8ComparesUnsigned() {
        ByteBuffer a = buf(1);
        ByteBuffer b = buf(1);
        a.put(0, (byte) 200);
        b.put(0, (byte) 100);
        reducer.reduce(DType.UINT8, ReduceOp.MAX, a, 0, b, 0, 1);
        assertEquals(200, a.get(0) & 0xFF);
        reducer.reduce(DType.UINT8, ReduceOp.MIN, a, 0, b, 0, 1);
        assertEquals(100, a.get(0) & 0xFF);
        a.put(0, (byte) 200);
        reducer.reduce(DType.INT8, ReduceOp.MIN, a, 0, b, 0, 1);
        assertEquals((byte) 200, a.get(0)); // -56 < 100 signed
    }

    @Test
    void minAndMaxPropagateNaNFromEitherSide() {
        for (ReduceOp op : new ReduceOp[] {ReduceOp.MIN, ReduceOp.MAX}) {
            ByteBuffer a = buf(8);
            ByteBuffer b = buf(8);
            a.putFloat(0, Float.NaN).putFloat(4, 1f);
            b.putFloat(0, 1f).putFloat(4, Float.NaN);
            reducer.reduce(DType.FLOAT32, op, a, 0, b, 0, 2);
            assertTrue(Float.isNaN(a.getFloat(0)) && Float.isNaN(a.getFloat(4)), op.toString());
            ByteBuffer h = buf(2);
            ByteBuffer g = buf(2);
            h.putShort(0, Half.floatToHalf(2f));
            g.putShort(0, Half.floatToHalf(Float.NaN));
            reducer.reduce(DType.FLOAT16, op, h, 0, g, 0, 1);
            assertTrue(Float.isNaN(Half.halfToFloat(h.getShort(0))), op + " float16");
        }
    }

    @Test
    void halfPrecisionSumsInFloatAndRoundsOnceToNearestEven() {
        ByteBuffer a = buf(2);
        ByteBuffer b = buf(2);
        // 2048 + 1 = 2049 is halfway between the float16 neighbours 2048 and 2050: ties to even, 2048.
        a.putShort(0, Half.floatToHalf(2048f));
        b.putShort(0, Half.floatToHalf(1f));
        reducer.reduce(DType.FLOAT16, ReduceOp.SUM, a, 0, b, 0, 1);
        assertEquals(2048f, Half.halfToFloat(a.getShort(0)));
        // 2050 + 1 = 2051, halfway between 2050 and 2052: ties to even mantissa, 2052.
        a.putShort(0, Half.floatToHalf(2050f));
        reducer.reduce(DType.FLOAT16, ReduceOp.SUM, a, 0, b, 0, 1);
        assertEquals(2052f, Half.halfToFloat(a.getShort(0)));
        // bfloat16: 256 + 1 = 257 halfway between 256 and 258: 256.
        a.putShort(0, Half.floatToBfloat16(256f));
        b.putShort(0, Half.floatToBfloat16(1f));
        reducer.reduce(DType.BFLOAT16, ReduceOp.SUM, a, 0, b, 0, 1);
        assertEquals(256f, Half.bfloat16ToFloat(a.getShort(0)));
    }

    @Test
    void integerScalingIsInDoubleAndTruncates() {
        ByteBuffer a = buf(16);
        a.putInt(0, 7).putInt(4, -7);
        reducer.scale(DType.INT32, a, 0, 2, 0.5);
        assertEquals(3, a.getInt(0));
        assertEquals(-3, a.getInt(4));
        a.put(8, (byte) 250);
        reducer.scale(DType.UINT8, a, 8, 1, 0.5);
        assertEquals(125, a.get(8) & 0xFF);
        a.putFloat(12, 3f);
        reducer.scale(DType.FLOAT32, a, 12, 1, 1.0 / 3);
        assertEquals(1f, a.getFloat(12));
    }

    @Test
    void bigEndianBuffersAreRejected() {
        ByteBuffer be = ByteBuffer.allocateDirect(4);
        assertThrows(IllegalArgumentException.class,
                () -> reducer.reduce(DType.FLOAT32, ReduceOp.SUM, be, 0, buf(4), 0, 1));
    }
}
