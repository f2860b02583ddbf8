package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kolo.kernels.testing.Elements;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Both implementations reject the same bad arguments the same way, before touching memory. */
class ArgumentChecksTest {

    static Iterable<Impl> impls() {
        return Impl.all().subList(0, 2);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void rejectsBadBuffersAndRanges(Impl impl) {
        impl.run(() -> {
            Kernels k = impl.kernels();
            ByteBuffer a = Elements.allocate(64);
            ByteBuffer b = Elements.allocate(64);
            ElementType f = ElementType.FLOAT32;
            ReductionOp sum = ReductionOp.SUM;
            assertThrows(IllegalArgumentException.class, () -> k.reduce(f, sum, ByteBuffer.allocate(64), 0, b, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> k.reduce(f, sum, a, 0, b, 0, -1));
            assertThrows(IndexOutOfBoundsException.class, () -> k.reduce(f, sum, a, 4, b, 0, 16));
            assertThrows(IndexOutOfBoundsException.class, () -> k.reduce(f, sum, a, 0, b, -1, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> k.reduce(f, sum, a, 0, b.limit(8), 0, 3));
            assertThrows(IndexOutOfBoundsException.class, () -> k.reduce(ElementType.INT64, sum, a, 0, a, 0, Long.MAX_VALUE / 4));
            assertThrows(ReadOnlyBufferException.class, () -> k.reduce(f, sum, a.asReadOnlyBuffer(), 0, b, 0, 1));
            assertThrows(ReadOnlyBufferException.class, () -> k.scale(f, a.asReadOnlyBuffer(), 0, 1, 2.0));
            assertThrows(NullPointerException.class, () -> k.scale(f, null, 0, 1, 2.0));
            return null;
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void readsReadOnlySourcesAndLeavesPositionAndLimitAlone(Impl impl) {
        impl.run(() -> {
            ByteBuffer a = Elements.allocate(64).position(5).limit(40);
            ByteBuffer b = Elements.allocate(64);
            b.putFloat(8, 2.5f);
            impl.kernels().reduce(ElementType.FLOAT32, ReductionOp.SUM, a, 8, b.asReadOnlyBuffer(), 8, 1);
            assertEquals(2.5f, a.getFloat(8));
            assertEquals(5, a.position());
            assertEquals(40, a.limit());
            return null;
        });
    }
}
