package dev.kolo.kernels;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.NoException;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * JNI bindings of the C ABI in {@code src/main/cpp/kolo_kernels.h}, generated and compiled by
 * the JavaCPP Maven plugin into {@code libjniKoloNativeLib<build>.so}, packaged under
 * {@code dev/kolo/kernels/<platform>/}.
 *
 * <p>Every kernel takes plain {@code long} addresses so a call creates no JavaCPP Pointer
 * objects; the signatures map one-to-one onto a {@code java.lang.foreign} downcall (see
 * README.md). Loading happens in the static initializer, so only {@link NativeKernels} touches
 * this class, and only inside a try that turns a load failure into the Java fallback.
 */
@Platform(include = {"kolo_kernels.h", "kolo_kernels_impl.h", "kolo_jni.h", "kolo_heap.h", "kolo_affinity.h"},
        library = "jniKoloNativeLib" + NativeKernels.ABI_VERSION)
@NoException // the C functions never throw and never call back into Java: skip JavaCPP's try/catch
final class KoloNativeLib {

    static {
        Loader.load();
    }

    private KoloNativeLib() {
    }

    static native int kolo_reduce(int dtype, int op, @Cast("void*") long dst, @Cast("const void*") long src,
                                  @Cast("int64_t") long count);

    static native int kolo_reduce_scale(int dtype, int op, @Cast("void*") long dst, @Cast("const void*") long src,
                                        @Cast("int64_t") long count, double factor);

    static native int kolo_scale(int dtype, @Cast("void*") long buf, @Cast("int64_t") long count, double factor);

    static native int kolo_convert(int dstDtype, @Cast("void*") long dst, int srcDtype, @Cast("const void*") long src,
                                   @Cast("int64_t") long count);

    static native int kolo_copy(@Cast("void*") long dst, @Cast("const void*") long src, @Cast("int64_t") long count);

    static native int kolo_copy_for_peer(@Cast("void*") long dst, @Cast("const void*") long src,
                                         @Cast("int64_t") long count);

    static native int kolo_isa();

    static native int kolo_set_max_isa(int maxLevel);

    static native int kolo_abi_version();

    static native int kolo_heap_keep_large_blocks(@Cast("int64_t") long mmapThreshold,
                                                  @Cast("int64_t") long trimThreshold);

    static native int kolo_allowed_cpus(int[] out, int capacity);

    static native int kolo_bind_thread(int tid, @Cast("const int*") int[] cpus, int count);

    /** Address of element 0 of a direct buffer at position 0 (JavaCPP adds the position; pass a cleared duplicate). */
    static native @Cast("int64_t") long kolo_buffer_address(@Cast("const void*") java.nio.ByteBuffer buffer);
}
