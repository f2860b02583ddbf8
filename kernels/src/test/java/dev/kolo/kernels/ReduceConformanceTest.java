package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.kernels.testing.Elements;
import dev.kolo.kernels.testing.Reference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every op x type x implementation against {@link Reference}, at awkward lengths and offsets. */
class ReduceConformanceTest {

    private static final int[] SMALL_LENGTHS = {0, 1, 7, 64, 1000};
    private static final int BIG_LENGTH = 1_000_003;
    private static final double[] FACTORS = {0.25, -1.0 / 3, 1e12, Double.NaN};

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Impl impl : Impl.all()) {
            for (ElementType t : ElementType.values()) {
                for (ReductionOp op : ReductionOp.values()) {
                    cases.add(Arguments.of(impl, t, op));
                }
            }
        }
        return cases.stream();
    }

    static Stream<Arguments> typeCases() {
        List<Arguments> cases = new ArrayList<>();
        for (Impl impl : Impl.all()) {
            for (ElementType t : ElementType.values()) {
                cases.add(Arguments.of(impl, t));
            }
        }
        return cases.stream();
    }

    /** Offsets: aligned, one element in, and odd bytes (legal: the kernels take any byte offset). */
    private static int[] offsets(ElementType t) {
        return new int[] {0, t.byteSize(), 1, 3};
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void reduceMatchesReference(Impl impl, ElementType t, ReductionOp op) {
        impl.run(() -> {
            SplittableRandom rnd = new SplittableRandom(t.ordinal() * 31L + op.ordinal());
            for (int length : SMALL_LENGTHS) {
                for (int dstOff : offsets(t)) {
                    check(impl, t, op, length, dstOff, offsets(t)[(dstOff + 1) % 4], null, rnd);
                }
            }
            check(impl, t, op, BIG_LENGTH, 1, t.byteSize() + 3, null, rnd);
            return null;
        });
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void reduceAndScaleMatchesReference(Impl impl, ElementType t, ReductionOp op) {
        impl.run(() -> {
            SplittableRandom rnd = new SplittableRandom(t.ordinal() * 17L + op.ordinal());
            for (double factor : FACTORS) {
                check(impl, t, op, 1000, 3, 0, factor, rnd);
                check(impl, t, op, 7, 0, 1, factor, rnd);
            }
            check(impl, t, op, 10_007, 0, 0, 0.5, rnd);
            return null;
        });
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typeCases")
    void scaleMatchesReference(Impl impl, ElementType t) {
        impl.run(() -> {
            SplittableRandom rnd = new SplittableRandom(t.ordinal());
            for (double factor : new double[] {0.25, -1.0 / 3, 3.0, 1e12, -1e300, Double.NaN}) {
                for (int length : new int[] {0, 1, 7, 64, 1000}) {
                    for (int off : offsets(t)) {
                        checkScale(impl, t, length, off, factor, rnd);
                    }
                }
            }
            checkScale(impl, t, BIG_LENGTH, 1, 0.5, rnd);
            return null;
        });
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typeCases")
    void integerSumAndProductWrapAround(Impl impl, ElementType t) {
        if (t.isFloatingPoint()) {
            return;
        }
        impl.run(() -> {
            long max = t == ElementType.INT8 ? 127 : t == ElementType.UINT8 ? 255
                    : t == ElementType.INT32 ? Integer.MAX_VALUE : Long.MAX_VALUE;
            ByteBuffer a = Elements.allocate(2 * t.byteSize());
            ByteBuffer b = Elements.allocate(2 * t.byteSize());
            Elements.put(t, a, 0, 0, max);
            Elements.put(t, b, 0, 0, 1);
            Elements.put(t, a, 0, 1, max);
            Elements.put(t, b, 0, 1, 2);
            impl.kernels().reduce(t, ReductionOp.SUM, a, 0, b, 0, 2);
            long min = t == ElementType.UINT8 ? 0 : t == ElementType.INT8 ? -128
                    : t == ElementType.INT32 ? Integer.MIN_VALUE : Long.MIN_VALUE;
            assertBits(t, min, Elements.get(t, a, 0, 0), "max + 1 wraps to min");
            assertBits(t, min + 1, Elements.get(t, a, 0, 1), "max + 2 wraps to min + 1");
            impl.kernels().reduce(t, ReductionOp.PRODUCT, a, 0, b, 0, 2);
            assertBits(t, min, Elements.get(t, a, 0, 0), "min * 1");
            assertBits(t, 2 * (min + 1), Elements.get(t, a, 0, 1), "(min + 1) * 2 wraps");
            return null;
        });
    }

    private static void assertBits(ElementType t, long expected, long actual, String what) {
        if (!Elements.same(t, expected, actual)) {
            fail(t + " " + what + ": expected " + expected + " but was " + actual);
        }
    }

    /** factor == null: plain reduce; otherwise reduce-and-scale. */
    private static void check(Impl impl, ElementType t, ReductionOp op, int length, int dstOff, int srcOff,
                              Double factor, SplittableRandom rnd) {
        int size = t.byteSize();
        ByteBuffer dst = Elements.allocate(dstOff + length * size + 8);
        ByteBuffer src = Elements.allocate(srcOff + length * size + 8);
        Elements.fillRandom(t, dst, dstOff, length, rnd);
        Elements.fillRandom(t, src, srcOff, length, rnd);
        // a guard element after the range must survive
        Elements.put(t, dst, dstOff, length, 0x55);
        long[] before = new long[length];
        for (int i = 0; i < length; i++) {
            before[i] = Elements.get(t, dst, dstOff, i);
        }
        if (factor == null) {
            impl.kernels().reduce(t, op, dst, dstOff, src, srcOff, length);
        } else {
            impl.kernels().reduceAndScale(t, op, dst, dstOff, src, srcOff, length, factor);
        }
        for (int i = 0; i < length; i++) {
            long s = Elements.get(t, src, srcOff, i);
            long expected = factor == null ? Reference.reduce(t, op, before[i], s)
                    : Reference.reduceAndScale(t, op, before[i], s, factor);
            long actual = Elements.get(t, dst, dstOff, i);
            if (!Elements.same(t, expected, actual)) {
                fail(String.format("%s %s %s length %d offsets %d/%d factor %s, element %d: op(%s, %s) expected %s but was %s",
                        impl, t, op, length, dstOff, srcOff, factor, i, Long.toHexString(before[i]),
                        Long.toHexString(s), Long.toHexString(expected), Long.toHexString(actual)));
            }
        }
        if (Elements.get(t, dst, dstOff, length) != 0x55) {
            fail(impl + " " + t + " wrote past the end of the range");
        }
    }

    private static void checkScale(Impl impl, ElementType t, int length, int off, double factor, SplittableRandom rnd) {
        ByteBuffer buf = Elements.allocate(off + length * t.byteSize());
        Elements.fillRandom(t, buf, off, length, rnd);
        long[] before = new long[length];
        for (int i = 0; i < length; i++) {
            before[i] = Elements.get(t, buf, off, i);
        }
        impl.kernels().scale(t, buf, off, length, factor);
        for (int i = 0; i < length; i++) {
            long expected = Reference.scale(t, before[i], factor);
            long actual = Elements.get(t, buf, off, i);
            if (!Elements.same(t, expected, actual)) {
                fail(String.format("%s scale %s by %s, length %d offset %d, element %d: %s expected %s but was %s",
                        impl, t, factor, length, off, i, Long.toHexString(before[i]), Long.toHexString(expected),
                        Long.toHexString(actual)));
            }
        }
    }
}
