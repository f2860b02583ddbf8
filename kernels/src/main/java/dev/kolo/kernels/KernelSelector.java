package dev.kolo.kernels;

import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Chooses native or Java kernels for the process: on first use, or as a worker's settings ask. */
final class KernelSelector {

    private static final Logger LOG = LoggerFactory.getLogger(KernelSelector.class);
    private static volatile Kernels selected;

    private KernelSelector() {
    }

    static Kernels selected() {
        Kernels k = selected;
        if (k == null) {
            synchronized (KernelSelector.class) {
                k = selected;
                if (k == null) {
                    k = select("auto");
                    selected = k;
                }
            }
        }
        return k;
    }

    static synchronized Kernels configure(String mode, String maxIsa) {
        Kernels k = select(mode);
        if (k != JavaKernels.INSTANCE) {
            NativeKernels.setMaxIsa(maxIsa == null ? "avx512" : maxIsa); // avx512 caps nothing: the best the CPU has
        }
        selected = k;
        return k;
    }

    /** The kernels for a setting of {@code null}/{@code auto}, {@code native} or {@code java}. */
    static Kernels select(String setting) {
        String mode = setting == null ? "auto" : setting.trim().toLowerCase(Locale.ROOT);
        switch (mode) {
            case "java":
                LOG.info("Kolo kernels: java (KOLO_KERNELS=java)");
                return JavaKernels.INSTANCE;
            case "native":
                if (!NativeKernels.isAvailable()) {
                    Throwable cause = NativeKernels.unavailableCause().orElseThrow();
                    throw new IllegalStateException("KOLO_KERNELS=native but the native kernels cannot load: " + cause, cause);
                }
                LOG.info("Kolo kernels: native ({}), KOLO_KERNELS=native", NativeKernels.isa());
                return NativeBufferKernels.INSTANCE;
            case "auto":
            case "":
                if (NativeKernels.isAvailable()) {
                    LOG.debug("Kolo kernels: native ({})", NativeKernels.isa());
                    return NativeBufferKernels.INSTANCE;
                }
                LOG.warn("Kolo kernels: native library unavailable, using the slower Java fallback: {}",
                        NativeKernels.unavailableCause().map(Throwable::toString).orElse("unknown"));
                return JavaKernels.INSTANCE;
            default:
                throw new IllegalArgumentException("KOLO_KERNELS must be one of auto, native, java (got '" + setting + "')");
        }
    }
}
