package dev.kolo.kernels;

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
}
