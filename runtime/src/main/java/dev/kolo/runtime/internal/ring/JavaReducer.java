package dev.kolo.runtime.internal.ring;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Portable {@link Reducer}: plain loops over absolute little-endian accesses. The op switch is hoisted out
 * of each loop so that C2 compiles one tight loop per (type, op). Stateless; use {@link #INSTANCE}.
 */
public final class JavaReducer implements Reducer {
    /** The shared instance. */
    public static final JavaReducer INSTANCE = new JavaReducer();

    private JavaReducer() {
    }

    @Override
    public void reduce(DType dtype, ReduceOp op, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
            int count) {
        if (dst.order() != ByteOrder.LITTLE_ENDIAN || src.order() != ByteOrder.LITTLE_ENDIAN) {
            throw new IllegalArgumentException("reducer buffers must be little-endian");
        }
        switch (dtype) {
            case FLOAT32 -> reduceFloat32(op, dst, dstOffset, src, srcOffset, count);
            case FLOAT64 -> reduceFloat64(op, dst, dstOffset, src, srcOffset, count);
            case FLOAT16, BFLOAT16 -> reduceHalf(dtype == DType.BFLOAT16, op, dst, dstOffset, src, srcOffset, count);
            case INT8, UINT8 -> reduceInt8(dtype == DType.UINT8, op, dst, dstOffset, src, srcOffset, count);
            case INT32 -> reduceInt32(op, dst, dstOffset, src, srcOffset, count);
            case INT64 -> reduceInt64(op, dst, dstOffset, src, srcOffset, count);
            default -> throw new IllegalArgumentException("unsupported dtype " + dtype);
        }
    }

    private static void reduceFloat32(ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + 4 * n;
        switch (op) {
            case SUM, AVERAGE -> {
                for (; di < end; di += 4, si += 4) {
                    d.putFloat(di, d.getFloat(di) + s.getFloat(si));
                }
            }
            case MIN -> {
                for (; di < end; di += 4, si += 4) {
                    d.putFloat(di, Math.min(d.getFloat(di), s.getFloat(si)));
                }
            }
            case MAX -> {
                for (; di < end; di += 4, si += 4) {
                    d.putFloat(di, Math.max(d.getFloat(di), s.getFloat(si)));
                }
            }
            case PRODUCT -> {
                for (; di < end; di += 4, si += 4) {
                    d.putFloat(di, d.getFloat(di) * s.getFloat(si));
                }
            }
            default -> throw new IllegalArgumentException(String.valueOf(op));
        }
    }

    private static void reduceFloat64(ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + 8 * n;
        switch (op) {
            case SUM, AVERAGE -> {
                for (; di < end; di += 8, si += 8) {
                    d.putDouble(di, d.getDouble(di) + s.getDouble(si));
                }
            }
            case MIN -> {
                for (; di < end; di += 8, si += 8) {
                    d.putDouble(di, Math.min(d.getDouble(di), s.getDouble(si)));
                }
            }
            case MAX -> {
                for (; di < end; di += 8, si += 8) {
                    d.putDouble(di, Math.max(d.getDouble(di), s.getDouble(si)));
                }
            }
            case PRODUCT -> {
                for (; di < end; di += 8, si += 8) {
                    d.putDouble(di, d.getDouble(di) * s.getDouble(si));
                }
            }
            default -> throw new IllegalArgumentException(String.valueOf(op));
        }
    }

    private static void reduceHalf(boolean bf16, ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + 2 * n;
        for (; di < end; di += 2, si += 2) {
            float a = bf16 ? Half.bfloat16ToFloat(d.getShort(di)) : Half.halfToFloat(d.getShort(di));
            float b = bf16 ? Half.bfloat16ToFloat(s.getShort(si)) : Half.halfToFloat(s.getShort(si));
            float r = switch (op) {
                case SUM, AVERAGE -> a + b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
                case PRODUCT -> a * b;
            };
            d.putShort(di, bf16 ? Half.floatToBfloat16(r) : Half.floatToHalf(r));
        }
    }

    private static void reduceInt8(boolean unsigned, ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + n;
        int mask = unsigned ? 0xFF : -1; // widen unsigned bytes for MIN/MAX; sums and products wrap either way
        switch (op) {
            case SUM, AVERAGE -> {
                for (; di < end; di++, si++) {
                    d.put(di, (byte) (d.get(di) + s.get(si)));
                }
            }
            case MIN -> {
                for (; di < end; di++, si++) {
                    d.put(di, (byte) Math.min(d.get(di) & mask, s.get(si) & mask));
                }
            }
            case MAX -> {
                for (; di < end; di++, si++) {
                    d.put(di, (byte) Math.max(d.get(di) & mask, s.get(si) & mask));
                }
            }
            case PRODUCT -> {
                for (; di < end; di++, si++) {
                    d.put(di, (byte) (d.get(di) * s.get(si)));
                }
            }
            default -> throw new IllegalArgumentException(String.valueOf(op));
        }
    }

    private static void reduceInt32(ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + 4 * n;
        switch (op) {
            case SUM, AVERAGE -> {
                for (; di < end; di += 4, si += 4) {
                    d.putInt(di, d.getInt(di) + s.getInt(si));
                }
            }
            case MIN -> {
                for (; di < end; di += 4, si += 4) {
                    d.putInt(di, Math.min(d.getInt(di), s.getInt(si)));
                }
            }
            case MAX -> {
                for (; di < end; di += 4, si += 4) {
                    d.putInt(di, Math.max(d.getInt(di), s.getInt(si)));
                }
            }
            case PRODUCT -> {
                for (; di < end; di += 4, si += 4) {
                    d.putInt(di, d.getInt(di) * s.getInt(si));
                }
            }
            default -> throw new IllegalArgumentException(String.valueOf(op));
        }
    }

    private static void reduceInt64(ReduceOp op, ByteBuffer d, int di, ByteBuffer s, int si, int n) {
        int end = di + 8 * n;
        switch (op) {
            case SUM, AVERAGE -> {
                for (; di < end; di += 8, si += 8) {
                    d.putLong(di, d.getLong(di) + s.getLong(si));
                }
            }
            case MIN -> {
                for (; di < end; di += 8, si += 8) {
                    d.putLong(di, Math.min(d.getLong(di), s.getLong(si)));
                }
            }
            case MAX -> {
                for (; di < end; di += 8, si += 8) {
                    d.putLong(di, Math.max(d.getLong(di), s.getLong(si)));
                }
            }
            case PRODUCT -> {
                for (; di < end; di += 8, si += 8) {
                    d.putLong(di, d.getLong(di) * s.getLong(si));
                }
            }
            default -> throw new IllegalArgumentException(String.valueOf(op));
        }
    }

    @Override
    public void scale(DType dtype, ByteBuffer b, int offset, int count, double factor) {
        if (b.order() != ByteOrder.LITTLE_ENDIAN) {
            throw new IllegalArgumentException("reducer buffers must be little-endian");
        }
        int i = offset;
        int end = offset + count * dtype.byteSize();
        switch (dtype) {
            case FLOAT32 -> {
                for (; i < end; i += 4) {
                    b.putFloat(i, (float) (b.getFloat(i) * factor));
                }
            }
            case FLOAT64 -> {
                for (; i < end; i += 8) {
                    b.putDouble(i, b.getDouble(i) * factor);
                }
            }
            case FLOAT16 -> {
                float f = (float) factor;
                for (; i < end; i += 2) {
                    b.putShort(i, Half.floatToHalf(Half.halfToFloat(b.getShort(i)) * f));
                }
            }
            case BFLOAT16 -> {
                float f = (float) factor;
                for (; i < end; i += 2) {
                    b.putShort(i, Half.floatToBfloat16(Half.bfloat16ToFloat(b.getShort(i)) * f));
                }
            }
            case INT8 -> {
                for (; i < end; i++) {
                    b.put(i, (byte) (long) (b.get(i) * factor));
                }
            }
            case UINT8 -> {
                for (; i < end; i++) {
                    b.put(i, (byte) (long) ((b.get(i) & 0xFF) * factor));
                }
            }
            case INT32 -> {
                for (; i < end; i += 4) {
                    b.putInt(i, (int) (long) (b.getInt(i) * factor));
                }
            }
            case INT64 -> {
                for (; i < end; i += 8) {
                    b.putLong(i, (long) (b.getLong(i) * factor));
                }
            }
            default -> throw new IllegalArgumentException("unsupported dtype " + dtype);
        }
    }
}
