package dev.kolo.runtime.internal.ring;

/**
 * float <-> FLOAT16/BFLOAT16 with round to nearest even; NaN stays NaN. A local copy of the runtime's
 * package-private HalfPrecision, so the data plane depends on nothing outside its package.
 */
final class Half {
    private Half() {
    }

    static float halfToFloat(short h) {
        int bits = h & 0xFFFF;
        int sign = (bits & 0x8000) << 16;
        int exp = (bits >>> 10) & 0x1F;
        int mant = bits & 0x3FF;
        if (exp == 0x1F) {
            return Float.intBitsToFloat(sign | 0x7F800000 | (mant << 13));
        }
        if (exp == 0) {
            float f = mant * 0x1p-24f; // subnormal half, exact in float
            return sign != 0 ? -f : f;
        }
        return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
    }

    static short floatToHalf(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 16) & 0x8000;
        int abs = x & 0x7FFFFFFF;
        if (abs >= 0x7F800000) {
            // Inf stays Inf; NaN keeps a quiet payload bit so it never becomes Inf.
            return (short) (sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 | ((abs >>> 13) & 0x3FF) : 0));
        }
        if (abs >= 0x477FF000) {
            return (short) (sign | 0x7C00); // rounds to or beyond 65520: Inf
        }
        if (abs < 0x38800000) {
            int e = abs >>> 23;
            if (e < 102) {
                return (short) sign;
            }
            int mant = (abs & 0x7FFFFF) | 0x800000;
            int shift = 126 - e;
            int half = mant >>> shift;
            int rem = mant & ((1 << shift) - 1);
            int mid = 1 << (shift - 1);
            if (rem > mid || (rem == mid && (half & 1) != 0)) {
                half++;
            }
            return (short) (sign | half);
        }
        int rounded = abs + 0xFFF + ((abs >>> 13) & 1);
        return (short) (sign | ((rounded - 0x38000000) >>> 13));
    }

    static float bfloat16ToFloat(short b) {
        return Float.intBitsToFloat((b & 0xFFFF) << 16);
    }

    static short floatToBfloat16(float f) {
        int x = Float.floatToRawIntBits(f);
        if ((x & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((x >>> 16) | 0x40); // quiet NaN, never rounded into Inf
        }
        return (short) ((x + 0x7FFF + ((x >>> 16) & 1)) >>> 16);
    }
}
