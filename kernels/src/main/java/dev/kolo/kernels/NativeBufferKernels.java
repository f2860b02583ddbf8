package dev.kolo.kernels;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/** {@link Kernels} over direct buffers, backed by the native library: checks ranges, then passes addresses. */
final class NativeBufferKernels implements Kernels {

    static final NativeBufferKernels INSTANCE = new NativeBufferKernels();

    private final DirectAddresses addresses = new DirectAddresses();

    private NativeBufferKernels() {
    }

    @Override
    public String name() {
        return "native";
    }

    @Override
    public void reduce(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                       ByteBuffer src, long srcByteOffset, long count) {
        BufferRanges.checkWrite(dst, dstByteOffset, count, type.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, type.byteSize());
        try {
            NativeKernels.reduce(type, op, addresses.of(dst) + dstByteOffset, addresses.of(src) + srcByteOffset, count);
        } finally {
            // The buffers own the memory: they must outlive the native call.
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(src);
        }
    }

    @Override
    public void reduceAndScale(ElementType type, ReductionOp op, ByteBuffer dst, long dstByteOffset,
                               ByteBuffer src, long srcByteOffset, long count, double factor) {
        BufferRanges.checkWrite(dst, dstByteOffset, count, type.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, type.byteSize());
        try {
            NativeKernels.reduceAndScale(type, op, addresses.of(dst) + dstByteOffset,
                    addresses.of(src) + srcByteOffset, count, factor);
        } finally {
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(src);
        }
    }

    @Override
    public void scale(ElementType type, ByteBuffer buf, long byteOffset, long count, double factor) {
        BufferRanges.checkWrite(buf, byteOffset, count, type.byteSize());
        try {
            NativeKernels.scale(type, addresses.of(buf) + byteOffset, count, factor);
        } finally {
            Reference.reachabilityFence(buf);
        }
    }

    @Override
    public void copyForPeer(ByteBuffer dst, long dstByteOffset, ByteBuffer src, long srcByteOffset, long byteCount) {
        BufferRanges.checkWrite(dst, dstByteOffset, byteCount, 1);
        BufferRanges.checkRead(src, srcByteOffset, byteCount, 1);
        try {
            NativeKernels.copyForPeer(addresses.of(dst) + dstByteOffset, addresses.of(src) + srcByteOffset, byteCount);
        } finally {
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(src);
        }
    }

    @Override
    public void convert(ElementType dstType, ByteBuffer dst, long dstByteOffset,
                        ElementType srcType, ByteBuffer src, long srcByteOffset, long count) {
        JavaKernels.checkConversion(dstType, srcType);
        BufferRanges.checkWrite(dst, dstByteOffset, count, dstType.byteSize());
        BufferRanges.checkRead(src, srcByteOffset, count, srcType.byteSize());
        try {
            NativeKernels.convert(dstType, addresses.of(dst) + dstByteOffset, srcType,
                    addresses.of(src) + srcByteOffset, count);
        } finally {
            Reference.reachabilityFence(dst);
            Reference.reachabilityFence(src);
        }
    }

    @Override
    public String toString() {
        return "Kernels[native]";
    }
}
