package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The scalar conversions against a nearest-value search over the target format. */
class HalfFloatsTest {

    /** Value of a float16 from the definition. */
    private static double halfValue(int h) {
        int e = (h >>> 10) & 0x1F;
        int m = h & 0x3FF;
        double v = e == 0 ? Math.scalb((double) m, -24) : Math.scalb(1 + m / 1024.0, e - 15);
        return (h & 0x8000) != 0 ? -v : v;
    }

    /** Nearest float16 by binary search over the ordered finite halves, ties to even, overflow to infinity. */
    private static short referenceHalf(float f) {
        int sign = Float.floatToRawIntBits(f) < 0 ? 0x8000 : 0;
        double d = Math.abs((double) f);
        if (d >= 65520) {
            return (short) (sign | 0x7C00);
        }
        int lo = 0;
        int hi = 0x7BFF;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (halfValue(mid) <= d) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        double below = d - halfValue(lo);
        double above = (lo == 0x7BFF ? 65536 : halfValue(lo + 1)) - d;
        int h = below < above ? lo : above < below ? lo + 1 : ((lo & 1) == 0 ? lo : lo + 1);
        return (short) (sign | h);
    }

    /** Nearest bfloat16: one of the two truncations around f, ties to even, overflow to infinity. */
    private static short referenceBfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isInfinite(f)) {
            return (short) (bits >>> 16);
        }
        int down = bits & 0xFFFF0000;
        double d = f;
        double lower = Float.intBitsToFloat(down);
        double upper = (down & 0x7FFFFFFF) == 0x7F7F0000 ? Math.copySign(0x1p128, d) : Float.intBitsToFloat(down + 0x10000);
        double dl = Math.abs(d - lower);
        double du = Math.abs(upper - d);
        int pick = dl < du ? down : du < dl ? down + 0x10000 : (((down >>> 16) & 1) == 0 ? down : down + 0x10000);
        return (short) (pick >>> 16);
    }

    @Test
    void everyHalfWidensToItsValue() {
        for (int h = 0; h < 0x10000; h++) {
            float f = HalfFloats.halfToFloat((short) h);
            boolean nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
            if (nan) {
                assertTrue(Float.isNaN(f), Integer.toHexString(h));
            } else if ((h & 0x7FFF) == 0x7C00) {
                assertEquals((h & 0x8000) != 0 ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY, f);
            } else {
                assertEquals(halfValue(h), f, 0.0, Integer.toHexString(h));
                assertEquals((short) h, HalfFloats.floatToHalf(f), "round trip " + Integer.toHexString(h));
            }
        }
    }

    @Test
    void narrowingRoundsToNearestEvenAtEveryMidpoint() {
        for (int h = 0; h < 0x7C00; h++) {
            double mid = (halfValue(h) + (h == 0x7BFF ? 65536 : halfValue(h + 1))) / 2; // exact in float
            float m = (float) mid;
            for (float f : new float[] {m, Math.nextDown(m), Math.nextUp(m), -m, (float) halfValue(h)}) {
                assertEquals(referenceHalf(f), HalfFloats.floatToHalf(f), () -> "float " + f);
            }
        }
    }

    @Test
    void narrowingMatchesReferenceOnRandomFloats() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 500_000; i++) {
            float f = Float.intBitsToFloat(rnd.nextInt());
            if (Float.isNaN(f)) {
                assertTrue(Float.isNaN(HalfFloats.halfToFloat(HalfFloats.floatToHalf(f))));
                assertTrue(Float.isNaN(HalfFloats.bfloat16ToFloat(HalfFloats.floatToBfloat16(f))));
                continue;
            }
            assertEquals(referenceHalf(f), HalfFloats.floatToHalf(f), () -> "float16 of " + f);
            assertEquals(referenceBfloat16(f), HalfFloats.floatToBfloat16(f), () -> "bfloat16 of " + f);
        }
    }

    @Test
    void specialValues() {
        assertEquals((short) 0x3C00, HalfFloats.floatToHalf(1.0f));
        assertEquals((short) 0x7BFF, HalfFloats.floatToHalf(65504f));
        assertEquals((short) 0x7C00, HalfFloats.floatToHalf(65520f));
        assertEquals((short) 0x7BFF, HalfFloats.floatToHalf(65519.996f));
        assertEquals((short) 0x0001, HalfFloats.floatToHalf(0x1p-24f));
        assertEquals((short) 0x0000, HalfFloats.floatToHalf(0x1p-25f));
        assertEquals((short) 0x0001, HalfFloats.floatToHalf(Math.nextUp(0x1p-25f)));
        assertEquals((short) 0x8000, HalfFloats.floatToHalf(-0.0f));
        assertEquals((short) 0xFC00, HalfFloats.floatToHalf(Float.NEGATIVE_INFINITY));
        assertEquals((short) 0x7E00, HalfFloats.floatToHalf(Float.NaN));
        assertEquals((short) 0x3C00, HalfFloats.floatToHalf(1 + 0x1p-11f)); // tie, to even
        assertEquals((short) 0x3C02, HalfFloats.floatToHalf(1 + 0x3p-11f)); // tie, to even
        assertEquals((short) 0x3F80, HalfFloats.floatToBfloat16(1.0f));
        assertEquals((short) 0x7F80, HalfFloats.floatToBfloat16(Float.MAX_VALUE));
        assertEquals((short) 0x7FC0, HalfFloats.floatToBfloat16(Float.NaN));
        assertEquals((short) 0x8000, HalfFloats.floatToBfloat16(-0.0f));
        assertEquals((short) 0x0001, HalfFloats.floatToBfloat16(Float.MIN_VALUE * 0x10000));
        assertEquals(1.0f, HalfFloats.bfloat16ToFloat((short) 0x3F80));
        assertTrue(Float.isNaN(HalfFloats.bfloat16ToFloat((short) 0x7F81)));
    }
}
