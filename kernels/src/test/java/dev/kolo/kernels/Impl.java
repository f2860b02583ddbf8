package dev.kolo.kernels;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * The implementations every conformance test runs against: Java, native at the best level the
 * CPU offers, and native pinned to the scalar (baseline x86-64) level.
 */
final class Impl {

    final String label;
    final Kernels kernels;
    private final String isa;

    private Impl(String label, Kernels kernels, String isa) {
        this.label = label;
        this.kernels = kernels;
        this.isa = isa;
    }

    static List<Impl> all() {
        List<Impl> impls = new ArrayList<>();
        impls.add(new Impl("java", JavaKernels.INSTANCE, null));
        impls.add(new Impl("native", null, "avx512"));
        impls.add(new Impl("native-scalar", null, "scalar"));
        return impls;
    }

    /** Runs {@code body} with this implementation, skipping native ones when the library is legitimately absent. */
    <T> T run(Supplier<T> body) {
        if (isa == null) {
            return body.get();
        }
        requireNative();
        String before = NativeKernels.isa();
        NativeKernels.setMaxIsa(isa);
        try {
            return body.get();
        } finally {
            NativeKernels.setMaxIsa(before);
        }
    }

    Kernels kernels() {
        return kernels != null ? kernels : NativeBufferKernels.INSTANCE;
    }

    /**
     * Native tests may be skipped only where the build skipped the native library
     * ({@code -Dkolo.native.skip=true} or no g++); anywhere else a missing library fails them.
     */
    static void requireNative() {
        if (NativeKernels.isAvailable()) {
            return;
        }
        String cause = NativeKernels.unavailableCause().map(Throwable::toString).orElse("?");
        if (Boolean.parseBoolean(System.getProperty("kolo.native.expected", "true"))) {
            throw new AssertionError("native kernels were built but cannot load: " + cause);
        }
        Assumptions.abort("native kernels not built (kolo.native.skip or no g++): testing the Java fallback only; " + cause);
    }

    @Override
    public String toString() {
        return label;
    }
}
