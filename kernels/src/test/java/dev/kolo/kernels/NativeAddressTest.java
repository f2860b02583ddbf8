package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kolo.kernels.testing.Elements;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The raw-address entry points for callers holding long-lived buffers. */
class NativeAddressTest {

    @BeforeEach
    void requireNative() {
        Impl.requireNative();
    }

    @Test
    void addressesIgnorePositionAndFollowSlices() {
        ByteBuffer buf = Elements.allocate(64);
        long base = NativeKernels.address(buf);
        buf.position(10);
        assertEquals(base, NativeKernels.address(buf));
        assertEquals(base + 16, NativeKernels.address(buf.slice(16, 8)));
        assertThrows(IllegalArgumentException.class, () -> NativeKernels.address(ByteBuffer.allocate(8)));
    }

    @Test
    void kernelsRunOnRawAddresses() {
        ByteBuffer a = Elements.allocate(64);
        ByteBuffer b = Elements.allocate(64);
        for (int i = 0; i < 4; i++) {
            a.putFloat(4 + 4 * i, i);
            b.putFloat(4 + 4 * i, 10);
        }
        long pa = NativeKernels.address(a);
        long pb = NativeKernels.address(b);
        NativeKernels.reduce(ElementType.FLOAT32, ReductionOp.SUM, pa + 4, pb + 4, 4);
        NativeKernels.reduceAndScale(ElementType.FLOAT32, ReductionOp.MAX, pa + 4, pb + 4, 4, 0.5);
        NativeKernels.scale(ElementType.FLOAT32, pa + 4, 4, 4.0);
        NativeKernels.convert(ElementType.FLOAT16, pb, ElementType.FLOAT32, pa + 4, 4);
        NativeKernels.copy(pa + 32, pb, 8);
        Reference.reachabilityFence(a);
        Reference.reachabilityFence(b);
        for (int i = 0; i < 4; i++) {
            assertEquals((i + 10) * 2f, a.getFloat(4 + 4 * i));
            assertEquals(HalfFloats.floatToHalf((i + 10) * 2f), a.getShort(32 + 2 * i));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NativeKernels.reduce(ElementType.FLOAT32, ReductionOp.SUM, 0, 0, 1));
        assertEquals("null address with a non-zero count", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> NativeKernels.reduce(ElementType.FLOAT32, ReductionOp.SUM, pa, pb, -1));
    }
}
