package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.kernels.testing.Elements;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** float32 <-> float16/bfloat16 buffers against the scalar {@link HalfFloats}, for every implementation. */
class ConversionTest {

    static Iterable<Impl> impls() {
        return Impl.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void everyHalfWidens(Impl impl) {
        impl.run(() -> {
            for (ElementType half : new ElementType[] {ElementType.FLOAT16, ElementType.BFLOAT16}) {
                ByteBuffer src = Elements.allocate(3 + 2 * 65536);
                ByteBuffer dst = Elements.allocate(1 + 4 * 65536);
                for (int h = 0; h < 65536; h++) {
                    src.putShort(3 + 2 * h, (short) h);
                }
                impl.kernels().convert(ElementType.FLOAT32, dst, 1, half, src, 3, 65536);
                for (int h = 0; h < 65536; h++) {
                    float expected = half == ElementType.FLOAT16 ? HalfFloats.halfToFloat((short) h)
                            : HalfFloats.bfloat16ToFloat((short) h);
                    if (!Elements.same(ElementType.FLOAT32, Float.floatToRawIntBits(expected), dst.getInt(1 + 4 * h))) {
                        fail(impl + " widening " + half + " " + Integer.toHexString(h));
                    }
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void floatsNarrowLikeTheScalarConversion(Impl impl) {
        impl.run(() -> {
            int n = 1_000_003;
            SplittableRandom rnd = new SplittableRandom(11);
            ByteBuffer src = Elements.allocate(1 + 4 * n);
            for (int i = 0; i < n; i++) {
                // half of them random bit patterns, half near the float16 range (rounding, subnormals, overflow)
                int bits = (i & 1) == 0 ? rnd.nextInt() : (rnd.nextInt(0x3000_0000, 0x4800_0000) | (rnd.nextBoolean() ? 0x8000_0000 : 0));
                src.putInt(1 + 4 * i, bits);
            }
            for (ElementType half : new ElementType[] {ElementType.FLOAT16, ElementType.BFLOAT16}) {
                for (int len : new int[] {0, 1, 7, 64, n}) {
                    ByteBuffer dst = Elements.allocate(3 + 2 * n + 2);
                    impl.kernels().convert(half, dst, 3, ElementType.FLOAT32, src, 1, len);
                    for (int i = 0; i < len; i++) {
                        float f = src.getFloat(1 + 4 * i);
                        short expected = half == ElementType.FLOAT16 ? HalfFloats.floatToHalf(f) : HalfFloats.floatToBfloat16(f);
                        if (!Elements.same(half, expected, dst.getShort(3 + 2 * i))) {
                            fail(impl + " narrowing " + f + " to " + half + ": expected " + Integer.toHexString(expected & 0xFFFF)
                                    + " but was " + Integer.toHexString(dst.getShort(3 + 2 * i) & 0xFFFF));
                        }
                    }
                    if (dst.getShort(3 + 2 * len) != 0) {
                        fail("wrote past the range");
                    }
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void sameTypeCopiesAndOtherPairsAreRejected(Impl impl) {
        impl.run(() -> {
            ByteBuffer src = Elements.allocate(64);
            ByteBuffer dst = Elements.allocate(64);
            for (int i = 0; i < 64; i++) {
                src.put(i, (byte) i);
            }
            impl.kernels().convert(ElementType.INT32, dst, 1, ElementType.INT32, src, 3, 7);
            for (int i = 0; i < 28; i++) {
                if (dst.get(1 + i) != src.get(3 + i)) {
                    fail("copy differs at " + i);
                }
            }
            assertThrows(IllegalArgumentException.class,
                    () -> impl.kernels().convert(ElementType.FLOAT16, dst, 0, ElementType.BFLOAT16, src, 0, 1));
            assertThrows(IllegalArgumentException.class,
                    () -> impl.kernels().convert(ElementType.FLOAT64, dst, 0, ElementType.FLOAT32, src, 0, 1));
            return null;
        });
    }
}
