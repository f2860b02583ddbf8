package dev.kolo.kernels;

import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Optional;

/**
 * The native kernels addressed by raw memory addresses, for callers that hold long-lived
 * direct buffers or off-heap memory: take {@link #address(ByteBuffer)} once per buffer and pass
 * {@code address + byteOffset} on every call. Semantics are those of {@link Kernels}.
 *
 * <p>Nothing here checks bounds: a wrong address or count corrupts memory or crashes the JVM,
 * and the caller must keep the memory alive (e.g. {@link java.lang.ref.Reference#reachabilityFence})
 * for the duration of the call. The {@link ByteBuffer} API of {@link Kernels#get()} is the safe one.
 *
 * <p>The instruction-set level (see {@link #isa()}) is the best the CPU supports; the system
 * property {@code kolo.kernels.isa} or environment variable {@code KOLO_KERNELS_ISA} set to
 * {@code scalar}, {@code avx2} or {@code avx512} caps it.
 */
public final class NativeKernels {

    /**
     * The native library's build: bumped on every change of {@code src/main/cpp} (NativeSourcesTest holds the
     * sources' digest for it), and part of the library's file name. JavaCPP reuses a library it extracted before when
     * the jar's name, the file's size and its time stamp match, and a reproducible build stamps every jar entry with
     * the same time: without the build in the name, a rebuilt {@code worker.jar} could run the old library.
     */
    static final int ABI_VERSION = 2;
    private static final String[] ISA_NAMES = {"scalar", "avx2", "avx512"};

    /** Null when the library loaded; otherwise why it did not. */
    private static final Throwable LOAD_FAILURE = load();

    private NativeKernels() {
    }

    private static Throwable load() {
        try {
            int abi = KoloNativeLib.kolo_abi_version();
            if (abi != ABI_VERSION) {
                return new UnsatisfiedLinkError("native kernels ABI version " + abi + ", expected " + ABI_VERSION);
            }
            return null;
        } catch (LinkageError | RuntimeException e) {
            // UnsatisfiedLinkError (no library for this platform, or built with -Dkolo.native.skip),
            // NoClassDefFoundError (JavaCPP missing), ExceptionInInitializerError.
            return e;
        }
    }

    /** True if the native library loaded and can be called. */
    public static boolean isAvailable() {
        return LOAD_FAILURE == null;
    }

    /** Why the native library is not available, if it is not. */
    public static Optional<Throwable> unavailableCause() {
        return Optional.ofNullable(LOAD_FAILURE);
    }

    /** Instruction-set level in use: {@code "scalar"}, {@code "avx2"} or {@code "avx512"}. */
    public static String isa() {
        requireAvailable();
        return ISA_NAMES[KoloNativeLib.kolo_isa()];
    }

    /**
     * Base address of a direct buffer (its element 0, whatever its position).
     *
     * @throws IllegalArgumentException if the buffer is not direct
     */
    public static long address(ByteBuffer direct) {
        requireAvailable();
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("not a direct buffer: " + direct);
        }
        // JavaCPP passes a Buffer as its address plus its position: use a duplicate at position 0,
        // so no other thread moving the caller's position can skew the result.
        return KoloNativeLib.kolo_buffer_address(direct.duplicate().clear());
    }

    /** {@code dst[i] = op(dst[i], src[i])} on raw memory. */
    public static void reduce(ElementType type, ReductionOp op, long dstAddress, long srcAddress, long count) {
        requireAvailable();
        check(KoloNativeLib.kolo_reduce(type.code(), op.code(), dstAddress, srcAddress, count));
    }

    /** {@code dst[i] = op(dst[i], src[i]) * factor} on raw memory. */
    public static void reduceAndScale(ElementType type, ReductionOp op, long dstAddress, long srcAddress,
                                      long count, double factor) {
        requireAvailable();
        check(KoloNativeLib.kolo_reduce_scale(type.code(), op.code(), dstAddress, srcAddress, count, factor));
    }

    /** {@code buf[i] = buf[i] * factor} on raw memory. */
    public static void scale(ElementType type, long address, long count, double factor) {
        requireAvailable();
        check(KoloNativeLib.kolo_scale(type.code(), address, count, factor));
    }

    /** Element conversion on raw memory; the pairs of {@link Kernels#convert}. */
    public static void convert(ElementType dstType, long dstAddress, ElementType srcType, long srcAddress,
                               long count) {
        requireAvailable();
        check(KoloNativeLib.kolo_convert(dstType.code(), dstAddress, srcType.code(), srcAddress, count));
    }

    /** memmove of {@code byteCount} bytes. */
    public static void copy(long dstAddress, long srcAddress, long byteCount) {
        requireAvailable();
        check(KoloNativeLib.kolo_copy(dstAddress, srcAddress, byteCount));
    }

    /** {@link Kernels#copyForPeer} on raw memory: the ranges must not overlap. */
    public static void copyForPeer(long dstAddress, long srcAddress, long byteCount) {
        requireAvailable();
        check(KoloNativeLib.kolo_copy_for_peer(dstAddress, srcAddress, byteCount));
    }

    /** Caps the instruction-set level (a worker's KOLO_KERNELS_ISA; tests pin the scalar path); returns the level in use. */
    static String setMaxIsa(String name) {
        requireAvailable();
        return ISA_NAMES[KoloNativeLib.kolo_set_max_isa(isaLevel(name))];
    }

    private static int isaLevel(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (int i = 0; i < ISA_NAMES.length; i++) {
            if (ISA_NAMES[i].equals(n)) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown instruction-set level '" + name + "', expected one of scalar, avx2, avx512");
    }

    static void requireAvailable() {
        if (LOAD_FAILURE != null) {
            throw new IllegalStateException("native kernels unavailable: " + LOAD_FAILURE, LOAD_FAILURE);
        }
    }

    private static void check(int status) {
        if (status != 0) {
            throw new IllegalArgumentException(statusMessage(status));
        }
    }

    static String statusMessage(int status) {
        switch (status) {
            case -1: return "unknown element type code";
            case -2: return "unknown reduction op code";
            case -3: return "negative element count";
            case -4: return "null address with a non-zero count";
            case -5: return "conversion between these element types is not supported";
            default: return "native kernel failed with status " + status;
        }
    }
}
