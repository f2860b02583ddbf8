package dev.kolo.kernels;

import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Chooses native or Java kernels once per process, honouring {@code kolo.kernels} / {@code KOLO_KERNELS}. */
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
                    // Not cached on failure: a bad setting keeps failing loudly on every call.
                    k = select(Settings.value("kolo.kernels", "KOLO_KERNELS"));
                    selected = k;
                }
            }
        }
        return k;
    }

    /** The kernels for a setting of {@code null}/{@code auto}, {@code native} or {@code java}. */
    static Kernels select(String setting) {
        String mode = setting == null ? "auto" : setting.trim().toLowerCase(Locale.ROOT);
        switch (mode) {
            case "java":
                LOG.info("Kolo kernels: java (forced by kolo.kernels/KOLO_KERNELS)");
                return JavaKernels.INSTANCE;
            case "native":
                if (!NativeKernels.isAvailable()) {
                    Throwable cause = NativeKernels.unavailableCause().orElseThrow();
                    throw new IllegalStateException("KOLO_KERNELS=native but the native kernels cannot load: " + cause, cause);
                }
                LOG.info("Kolo kernels: native ({}), forced by kolo.kernels/KOLO_KERNELS", NativeKernels.isa());
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
                throw new IllegalStateException("kolo.kernels/KOLO_KERNELS must be 'java', 'native' or 'auto', not '" + setting + "'");
        }
    }
}
