package dev.kolo.kernels;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * Per-thread arrays the Java kernels copy chunks into: bulk get/put between a direct buffer
 * and an array is a memcpy, and C2 vectorises the plain loops over the arrays.
 */
final class Scratch {

    /** Elements per chunk: two float chunks (32 KiB) stay in L1/L2. */
    static final int CHUNK = 4096;

    private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);

    private float[] floatsA;
    private float[] floatsB;
    private double[] doublesA;
    private double[] doublesB;
    private short[] shortsA;
    private short[] shortsB;
    private byte[] bytesA;
    private byte[] bytesB;
    private int[] intsA;
    private int[] intsB;
    private long[] longsA;
    private long[] longsB;

    static Scratch get() {
        return LOCAL.get();
    }

    float[] floatsA() {
        return floatsA != null ? floatsA : (floatsA = new float[CHUNK]);
    }

    float[] floatsB() {
        return floatsB != null ? floatsB : (floatsB = new float[CHUNK]);
    }

    double[] doublesA() {
        return doublesA != null ? doublesA : (doublesA = new double[CHUNK]);
    }

    double[] doublesB() {
        return doublesB != null ? doublesB : (doublesB = new double[CHUNK]);
    }

    short[] shortsA() {
        return shortsA != null ? shortsA : (shortsA = new short[CHUNK]);
    }

    short[] shortsB() {
        return shortsB != null ? shortsB : (shortsB = new short[CHUNK]);
    }

    byte[] bytesA() {
        return bytesA != null ? bytesA : (bytesA = new byte[CHUNK]);
    }

    byte[] bytesB() {
        return bytesB != null ? bytesB : (bytesB = new byte[CHUNK]);
    }

    int[] intsA() {
        return intsA != null ? intsA : (intsA = new int[CHUNK]);
    }

    int[] intsB() {
        return intsB != null ? intsB : (intsB = new int[CHUNK]);
    }

    long[] longsA() {
        return longsA != null ? longsA : (longsA = new long[CHUNK]);
    }

    long[] longsB() {
        return longsB != null ? longsB : (longsB = new long[CHUNK]);
    }

    /**
     * Buffers remembered per role (0 = destination, 1 = source): a rank reduces from one inbox per peer in turn,
     * so a role sees a few buffers come back, not one.
     */
    static final int VIEWS_PER_ROLE = 8;

    /**
     * Native-order typed views of the last buffers seen in each role, replaced round-robin. Held weakly: a
     * view keeps its buffer's (direct) memory alive, and a program that allocates a new tensor every step must
     * not find its old ones kept here. After a garbage collection the views of a buffer still in use are made
     * again once; between collections a call allocates nothing.
     */
    @SuppressWarnings("unchecked")
    private final WeakReference<Views>[][] views = new WeakReference[2][VIEWS_PER_ROLE];
    private final int[] nextVictim = new int[2];

    Views views(int role, ByteBuffer buf) {
        WeakReference<Views>[] slots = views[role];
        for (WeakReference<Views> ref : slots) {
            Views v = ref == null ? null : ref.get();
            if (v != null && v.source == buf) {
                return v;
            }
        }
        int i = nextVictim[role];
        nextVictim[role] = (i + 1) % VIEWS_PER_ROLE;
        Views v = new Views();
        v.reset(buf);
        slots[i] = new WeakReference<>(v);
        return v;
    }

    /**
     * Whole-buffer views of one buffer, made once and reused while the same buffer comes back (a ring's
     * chunks, a tensor step after step), so that a kernel call allocates nothing.
     */
    static final class Views {
        private ByteBuffer source;
        private FloatBuffer floats;
        private DoubleBuffer doubles;
        private ShortBuffer shorts;
        private IntBuffer ints;
        private LongBuffer longs;

        private void reset(ByteBuffer buf) {
            source = buf;
            floats = null;
            doubles = null;
            shorts = null;
            ints = null;
            longs = null;
        }

        private ByteBuffer whole() {
            return source.duplicate().clear().order(ByteOrder.nativeOrder());
        }

        FloatBuffer floats() {
            return floats != null ? floats : (floats = whole().asFloatBuffer());
        }

        DoubleBuffer doubles() {
            return doubles != null ? doubles : (doubles = whole().asDoubleBuffer());
        }

        ShortBuffer shorts() {
            return shorts != null ? shorts : (shorts = whole().asShortBuffer());
        }

        IntBuffer ints() {
            return ints != null ? ints : (ints = whole().asIntBuffer());
        }

        LongBuffer longs() {
            return longs != null ? longs : (longs = whole().asLongBuffer());
        }
    }
}
