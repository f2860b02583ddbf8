package dev.kolo.runtime;

import dev.kolo.kernels.HalfFloats;
import java.nio.ByteBuffer;

/** Reads and writes single elements of any {@link DType}: for factories, conversions and tests, not the hot path. */
final class ElementAccess {
    private ElementAccess() {
    }

    static double getDouble(ByteBuffer b, DType t, int i) {
        switch (t) {
            case FLOAT32: return b.getFloat(i * 4);
            case FLOAT64: return b.getDouble(i * 8);
            case FLOAT16: return HalfFloats.halfToFloat(b.getShort(i * 2));
            case BFLOAT16: return HalfFloats.bfloat16ToFloat(b.getShort(i * 2));
            case INT8: return b.get(i);
            case UINT8: return b.get(i) & 0xFF;
            case INT32: return b.getInt(i * 4);
            case INT64: return b.getLong(i * 8);
            default: throw new AssertionError(t);
        }
    }

    static long getLong(ByteBuffer b, DType t, int i) {
        switch (t) {
            case INT8: return b.get(i);
            case UINT8: return b.get(i) & 0xFF;
            case INT32: return b.getInt(i * 4);
            case INT64: return b.getLong(i * 8);
            default: return (long) getDouble(b, t, i);
        }
    }

    static void putDouble(ByteBuffer b, DType t, int i, double v) {
        switch (t) {
            case FLOAT32: b.putFloat(i * 4, (float) v); break;
            case FLOAT64: b.putDouble(i * 8, v); break;
            case FLOAT16: b.putShort(i * 2, HalfFloats.floatToHalf((float) v)); break;
            case BFLOAT16: b.putShort(i * 2, HalfFloats.floatToBfloat16((float) v)); break;
            case INT8: b.put(i, (byte) (long) v); break;
            case UINT8: b.put(i, (byte) (long) v); break;
            case INT32: b.putInt(i * 4, (int) (long) v); break;
            case INT64: b.putLong(i * 8, (long) v); break;
            default: throw new AssertionError(t);
        }
    }
}
