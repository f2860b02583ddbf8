package dev.kolo.kernels;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * The pure-Java {@link Kernels}: same results as the native library (bit for bit; see the
 * tests), used when it cannot load. Works chunk by chunk through per-thread scratch arrays.
 */
final class JavaKernels implements Kernels {

    static final JavaKernels INSTANCE = new JavaKernels();

    /** Modes, as in the native code: reduce, reduce then scale, scale only. */
    static final int REDUCE = 0;
    static final int REDUCE_SCALE = 1;
    static final int SCALE = 2;

    private JavaKernels() {
    }

    @Override
    public String name() {
        return "java";
    }

    @Override
    public void reduce(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                       ByteBuffer src, long srcByteOffset, long count) {
        BufferRanges.checkWrite(dst, dstByteOffset, count, type.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, type.byteSize());
        run(type, op, dst, (int) dstByteOffset, src, (int) srcByteOffset, (int) count, REDUCE, 1.0);
    }

    @Override
    public void reduceAndScale(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                               ByteBuffer src, long srcByteOffset, long count, double factor) {
        BufferRanges.checkWrite(dst, dstByteOffset, count, type.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, type.byteSize());
        run(type, op, dst, (int) dstByteOffset, src, (int) srcByteOffset, (int) count, REDUCE_SCALE, factor);
    }

    @Override
    public void scale(ElementType type, ByteBuffer buf, long byteOffset, long count, double factor) {
        BufferRanges.checkWrite(buf, byteOffset, count, type.byteSize());
        run(type, ReductionOp.SUM, buf, (int) byteOffset, null, 0, (int) count, SCALE, factor);
    }

    @Override
    public void copyForPeer(ByteBuffer dst, long dstByteOffset, ByteBuffer src, long srcByteOffset, long byteCount) {
        BufferRanges.checkWrite(dst, dstByteOffset, byteCount, 1);
        BufferRanges.checkRead(src, srcByteOffset, byteCount, 1);
        dst.put((int) dstByteOffset, src, (int) srcByteOffset, (int) byteCount);
    }

    @Override
    public void convert(ElementType dstType, ByteBuffer dst, long dstByteOffset,
                        ElementType srcType, ByteBuffer src, long srcByteOffset, long count) {
        checkConversion(dstType, srcType);
        int dstLength = BufferRanges.checkWrite(dst, dstByteOffset, count, dstType.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, srcType.byteSize());
        if (count == 0) {
            return;
        }
        if (dstType == srcType) {
            dst.put((int) dstByteOffset, src, (int) srcByteOffset, dstLength);
        } else if (srcType == ElementType.FLOAT32) {
            JavaHalfLoops.narrow(dstType, dst, (int) dstByteOffset, src, (int) srcByteOffset, (int) count);
        } else {
            JavaHalfLoops.widen(srcType, dst, (int) dstByteOffset, src, (int) srcByteOffset, (int) count);
        }
    }

    private static void run(ElementType type, ReductionOp op, ByteBuffer dst, int dstOffset,
                            ByteBuffer src, int srcOffset, int count, int mode, double factor) {
        if (count == 0) {
            return;
        }
        switch (type) {
            case FLOAT32:
                JavaFloatLoops.float32(op, dst, dstOffset, src, srcOffset, count, mode, (float) factor);
                break;
            case FLOAT64:
                JavaFloatLoops.float64(op, dst, dstOffset, src, srcOffset, count, mode, factor);
                break;
            case FLOAT16:
            case BFLOAT16:
                JavaHalfLoops.reduce(type, op, dst, dstOffset, src, srcOffset, count, mode, (float) factor);
                break;
            case INT8:
                JavaIntLoops.int8(false, op, dst, dstOffset, src, srcOffset, count, mode, factor);
                break;
            case UINT8:
                JavaIntLoops.int8(true, op, dst, dstOffset, src, srcOffset, count, mode, factor);
                break;
            case INT32:
                JavaIntLoops.int32(op, dst, dstOffset, src, srcOffset, count, mode, factor);
                break;
            case INT64:
                JavaIntLoops.int64(op, dst, dstOffset, src, srcOffset, count, mode, factor);
                break;
            default:
                throw new IllegalArgumentException("unsupported element type " + type);
        }
    }

    /** A native-order view of {@code length} bytes at {@code offset}, leaving the caller's buffer untouched. */
    static ByteBuffer view(ByteBuffer buf, int offset, int length) {
        return buf.slice(offset, length).order(ByteOrder.nativeOrder());
    }

    /**
     * Where the elements at byte {@code offset} start in the view that {@link #floats} and its siblings
     * return: in the cached whole-buffer view when the offset is a whole number of elements, else at 0 of a
     * fresh slice.
     */
    static int firstIndex(int offset, int elementBytes) {
        return offset % elementBytes == 0 ? offset / elementBytes : 0;
    }

    static FloatBuffer floats(ByteBuffer buf, int offset, int count, int role) {
        return offset % Float.BYTES == 0 ? Scratch.get().views(role, buf).floats()
                : view(buf, offset, count * Float.BYTES).asFloatBuffer();
    }

    static DoubleBuffer doubles(ByteBuffer buf, int offset, int count, int role) {
        return offset % Double.BYTES == 0 ? Scratch.get().views(role, buf).doubles()
                : view(buf, offset, count * Double.BYTES).asDoubleBuffer();
    }

    static ShortBuffer shorts(ByteBuffer buf, int offset, int count, int role) {
        return offset % Short.BYTES == 0 ? Scratch.get().views(role, buf).shorts()
                : view(buf, offset, count * Short.BYTES).asShortBuffer();
    }

    static IntBuffer ints(ByteBuffer buf, int offset, int count, int role) {
        return offset % Integer.BYTES == 0 ? Scratch.get().views(role, buf).ints()
                : view(buf, offset, count * Integer.BYTES).asIntBuffer();
    }

    static LongBuffer longs(ByteBuffer buf, int offset, int count, int role) {
        return offset % Long.BYTES == 0 ? Scratch.get().views(role, buf).longs()
                : view(buf, offset, count * Long.BYTES).asLongBuffer();
    }

    static void checkConversion(ElementType dstType, ElementType srcType) {
        boolean half = dstType == ElementType.FLOAT16 || dstType == ElementType.BFLOAT16
                || srcType == ElementType.FLOAT16 || srcType == ElementType.BFLOAT16;
        boolean float32 = dstType == ElementType.FLOAT32 || srcType == ElementType.FLOAT32;
        if (dstType != srcType && !(half && float32)) {
            throw new IllegalArgumentException("cannot convert " + srcType + " to " + dstType
                    + ": only FLOAT32 <-> FLOAT16/BFLOAT16 and same-type copies");
        }
    }

    @Override
    public String toString() {
        return "Kernels[java]";
    }
}
