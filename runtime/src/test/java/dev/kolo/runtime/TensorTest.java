package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.kernels.HalfFloats;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class TensorTest {

    @Test
    void factoriesKeepValuesAndShape() {
        Tensor t = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        assertEquals(DType.FLOAT32, t.dtype());
        assertArrayEquals(new long[] {2, 3}, t.shape());
        assertEquals(24, t.byteSize());
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, t.toFloatArray());
        assertArrayEquals(new long[] {-1, Long.MAX_VALUE}, Tensor.of(new long[] {-1, Long.MAX_VALUE}, 2).toLongArray());
        assertArrayEquals(new byte[] {-128, 127}, Tensor.of(new byte[] {-128, 127}, 2).toByteArray());
        Tensor scalar = Tensor.of(new double[] {2.5});
        assertEquals(0, scalar.rank());
        assertEquals(1, scalar.numElements());
    }

    @Test
    void convertingFactoryRoundsHalfTypesToNearestEven() {
        float[] v = {1.0f, 65504f, 65520f, 1e-8f, -0.0f, Float.NaN, 1.0009765625f, 1.00048828125f};
        float[] half = Tensor.of(DType.FLOAT16, v, v.length).toFloatArray();
        assertEquals(1.0f, half[0]);
        assertEquals(65504f, half[1]);
        assertEquals(Float.POSITIVE_INFINITY, half[2]); // the tie above the largest half rounds to Inf
        assertEquals(0f, half[3]);
        assertEquals(Float.floatToIntBits(-0.0f), Float.floatToIntBits(half[4]));
        assertTrue(Float.isNaN(half[5]));
        assertEquals(1.0009765625f, half[6]); // exactly representable
        assertEquals(1.0f, half[7]); // tie between 1 and 1+2^-10 goes to the even one
        float[] bf = Tensor.of(DType.BFLOAT16, new float[] {1.00390625f, 3.0f}, 2).toFloatArray();
        assertEquals(1.0f, bf[0]); // tie to even
        assertEquals(3.0f, bf[1]);
    }

    @Test
    void everyHalfValueRoundTripsExactly() {
        for (int bits = 0; bits < 0x10000; bits++) {
            float f = HalfFloats.halfToFloat((short) bits);
            if (!Float.isNaN(f)) {
                assertEquals((short) bits, HalfFloats.floatToHalf(f), "half bits " + Integer.toHexString(bits));
            }
        }
    }

    @Test
    void badShapesAreRejectedWithTheReason() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Tensor.of(new float[3], 2, 2)).getMessage()
                .contains("holds 4 elements but 3 values"));
        assertThrows(IllegalArgumentException.class, () -> Tensor.allocate(DType.FLOAT32, -1));
        assertThrows(ArithmeticException.class, () -> Tensor.allocate(DType.FLOAT32, Long.MAX_VALUE, 4));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> Tensor.wrap(DType.FLOAT32, ByteBuffer.allocate(8), 2)).getMessage().contains("direct"));
    }

    @Test
    void bufferViewIsReadOnlyAndZeroCopy() {
        ByteBuffer direct = ByteBuffer.allocateDirect(16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        Tensor t = Tensor.wrap(DType.INT32, direct, 4);
        direct.putInt(0, 7);
        assertEquals(7, t.toIntArray()[0]);
        assertTrue(t.buffer().isReadOnly());
    }
}
