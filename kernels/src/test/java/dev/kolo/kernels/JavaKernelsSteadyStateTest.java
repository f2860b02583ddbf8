package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The Java kernels reuse their views of a buffer that comes back, so a worker without the native library
 * allocates nothing per reduction in steady state; and a cached view never mixes up buffers or offsets.
 */
class JavaKernelsSteadyStateTest {
    private static final Kernels JAVA = Kernels.java();

    private static ByteBuffer floats(float... values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            b.putFloat(i * 4, values[i]);
        }
        return b;
    }

    @Test
    void buffersAndOffsetsThatChangeBetweenCallsGiveTheRightElements() {
        ByteBuffer a = floats(1, 2, 3, 4);
        ByteBuffer b = floats(10, 20, 30, 40);
        ByteBuffer c = floats(100, 200, 300, 400);
        JAVA.reduce(ElementType.FLOAT32, ReductionOp.SUM, a, 0, b, 0, 2);     // a = 11 22 3 4
        JAVA.reduce(ElementType.FLOAT32, ReductionOp.SUM, a, 8, c, 4, 2);     // a = 11 22 203 304
        JAVA.reduce(ElementType.FLOAT32, ReductionOp.SUM, c, 0, a, 4, 1);     // c = 122 200 300 400
        assertEquals(22f, a.getFloat(4));
        assertEquals(203f, a.getFloat(8));
        assertEquals(304f, a.getFloat(12));
        assertEquals(122f, c.getFloat(0));
        assertEquals(200f, c.getFloat(4));
        // An offset that is no whole number of elements: served by a fresh slice, not the cached view.
        ByteBuffer odd = ByteBuffer.allocateDirect(10).order(ByteOrder.LITTLE_ENDIAN).putFloat(2, 5f);
        JAVA.reduce(ElementType.FLOAT32, ReductionOp.SUM, odd, 2, b, 0, 1);
        assertEquals(15f, odd.getFloat(2));
    }

    @Test
    void steadyStateReductionsAllocateNothing() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuffer dst = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer src = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (ElementType type : ElementType.values()) {
            int count = (1 << 16) / type.byteSize() / 2;
            Runnable ops = () -> {
                for (int i = 0; i < 100; i++) {
                    JAVA.reduce(type, ReductionOp.SUM, dst, 0, src, (long) count * type.byteSize(), count);
                    JAVA.scale(type, dst, (long) count * type.byteSize(), count, 0.5);
                }
            };
            ops.run(); // warm: the first call makes the views
            long before = threads.getCurrentThreadAllocatedBytes();
            ops.run();
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < 1024, type + ": " + allocated + " bytes allocated by 200 kernel calls");
        }
    }

    @Test
    void aBufferTheProgramDropsIsNotKeptByTheCachedViews() throws InterruptedException {
        ByteBuffer dropped = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        JAVA.reduce(ElementType.FLOAT32, ReductionOp.SUM, dropped, 0, floats(1, 2), 0, 2);
        java.lang.ref.WeakReference<ByteBuffer> watch = new java.lang.ref.WeakReference<>(dropped);
        dropped = null;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (watch.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertTrue(watch.get() == null, "the kernels' view cache still holds a buffer the program dropped");
    }
}
