package dev.kolo.djl;

import dev.kolo.kernels.NativeHeap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tunes the C library's heap once per process before Kolo trains a DJL model: the engine allocates and frees its
 * activations every step, and glibc's default thresholds make each step fault those pages in again (see
 * {@link NativeHeap}). This changes the whole process's {@code malloc}, so it says so once in the log; a process
 * that sets glibc's own {@code MALLOC_MMAP_THRESHOLD_} or {@code MALLOC_TRIM_THRESHOLD_} keeps its choice.
 */
final class EngineHeap {
    private static final Logger LOG = LoggerFactory.getLogger(EngineHeap.class);
    private static boolean done;

    private EngineHeap() {
    }

    static synchronized void tuneOnce() {
        if (done) {
            return;
        }
        done = true;
        NativeHeap.Outcome outcome = NativeHeap.keepLargeBlocks();
        if (outcome == NativeHeap.Outcome.SET) {
            LOG.info("the C library's heap of this process now keeps blocks up to {} MiB and returns memory to the "
                    + "system only above {} MiB free (mallopt), so that the engine reuses its tensors' pages every "
                    + "step; set MALLOC_TRIM_THRESHOLD_=131072 in the environment to keep glibc's own behaviour",
                    NativeHeap.MMAP_THRESHOLD >> 20, NativeHeap.TRIM_THRESHOLD >> 20);
        } else {
            LOG.debug("native heap for the engine's tensors: {}", outcome);
        }
    }
}
