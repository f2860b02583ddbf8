package dev.kolo.runtime.internal.collectives;

import dev.kolo.kernels.HalfFloats;
import dev.kolo.runtime.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Typed element access for tests, with values as double. */
public final class Elements {
    private Elements() {
    }

    public static void put(DType t, ByteBuffer b, int i, double v) {
        int o = i * t.byteSize();
        switch (t) {
            case FLOAT32 -> b.putFloat(o, (float) v);
            case FLOAT64 -> b.putDouble(o, v);
            case FLOAT16 -> b.putShort(o, HalfFloats.floatToHalf((float) v));
            case BFLOAT16 -> b.putShort(o, HalfFloats.floatToBfloat16((float) v));
            case INT8, UINT8 -> b.put(o, (byte) (long) v);
            case INT32 -> b.putInt(o, (int) (long) v);
            case INT64 -> b.putLong(o, (long) v);
            default -> throw new IllegalArgumentException();
        }
    }

    /** Integer types: exact long value (UINT8 as 0..255). */
    public static long getLong(DType t, ByteBuffer b, int i) {
        int o = i * t.byteSize();
        return switch (t) {
            case INT8 -> b.get(o);
            case UINT8 -> b.get(o) & 0xFF;
            case INT32 -> b.getInt(o);
            case INT64 -> b.getLong(o);
            default -> throw new IllegalArgumentException();
        };
    }

    public static double get(DType t, ByteBuffer b, int i) {
        int o = i * t.byteSize();
        return switch (t) {
            case FLOAT32 -> b.getFloat(o);
            case FLOAT64 -> b.getDouble(o);
            case FLOAT16 -> HalfFloats.halfToFloat(b.getShort(o));
            case BFLOAT16 -> HalfFloats.bfloat16ToFloat(b.getShort(o));
            default -> getLong(t, b, i);
        };
    }

    /** Wraps a long to the width of an integer type (UINT8 to 0..255). */
    public static long wrap(DType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT32 -> (int) v;
            default -> v;
        };
    }

    /** Scaling as the kernels do it: in double, truncated, saturated to the type (UINT8 to 0..255). */
    public static long scaled(DType t, long v, double factor) {
        double d = v * factor;
        return switch (t) {
            case INT8 -> Math.max(Byte.MIN_VALUE, Math.min(Byte.MAX_VALUE, (int) d));
            case UINT8 -> Math.max(0, Math.min(255, (int) d));
            case INT32 -> (int) d;
            default -> (long) d;
        };
    }

    public static ByteBuffer direct(int bytes) {
        return ByteBuffer.allocateDirect(Math.max(bytes, 1)).order(ByteOrder.LITTLE_ENDIAN);
    }

    public static byte[] bytes(ByteBuffer b, int offset, int length) {
        byte[] out = new byte[length];
        b.get(offset, out, 0, length);
        return out;
    }
}
