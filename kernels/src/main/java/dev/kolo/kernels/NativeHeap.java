package dev.kolo.kernels;

/**
 * The C library's heap thresholds, for processes whose native engine allocates and frees large tensors every
 * step. glibc serves blocks above a dynamic threshold (128 KiB at start) from fresh pages and returns its heap top
 * to the system as soon as 128 KiB are free, so every training step pays page faults and page zeroing again for
 * its activations: measured on the cnn sample (DJL's PyTorch engine, one thread) as about 30% of a step. Keeping
 * blocks up to {@link #MMAP_THRESHOLD} in the heap and trimming only above {@link #TRIM_THRESHOLD} removes that.
 * The same figures as glibc's {@code MALLOC_MMAP_THRESHOLD_} and {@code MALLOC_TRIM_THRESHOLD_} variables; a process
 * that sets either keeps its own choice.
 */
public final class NativeHeap {
    /** Blocks up to this size come from the heap, not fresh pages (glibc's largest accepted value: 32 MiB). */
    public static final long MMAP_THRESHOLD = 32L << 20;
    /** The heap top is returned to the system only when this much is free (1 GiB). */
    public static final long TRIM_THRESHOLD = 1L << 30;

    private NativeHeap() {
    }

    /** What {@link #keepLargeBlocks()} did. */
    public enum Outcome {
        /** The thresholds are set. */
        SET,
        /** The environment sets glibc's own variables: left as they are. */
        LEFT_TO_ENVIRONMENT,
        /** Not glibc, or the native library is not available: nothing to do. */
        NOT_APPLICABLE,
        /** The C library refused the values. */
        REFUSED
    }

    /** Sets the thresholds for this process (idempotent; later allocations follow them). */
    public static synchronized Outcome keepLargeBlocks() {
        if (System.getenv("MALLOC_MMAP_THRESHOLD_") != null || System.getenv("MALLOC_TRIM_THRESHOLD_") != null) {
            return Outcome.LEFT_TO_ENVIRONMENT;
        }
        if (!NativeKernels.isAvailable()) {
            return Outcome.NOT_APPLICABLE;
        }
        switch (KoloNativeLib.kolo_heap_keep_large_blocks(MMAP_THRESHOLD, TRIM_THRESHOLD)) {
            case 0: return Outcome.SET;
            case 1: return Outcome.NOT_APPLICABLE;
            default: return Outcome.REFUSED;
        }
    }
}
