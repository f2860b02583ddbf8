package dev.kolo.djl;

import dev.kolo.kernels.NativeHeap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tunes the C library's heap once per process before Kolo trains a DJL model: the engine allocates and frees its
 * activations every step, and glibc's default thresholds make each step fault those pages in again (see
 * {@link NativeHeap}).
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
        LOG.debug("native heap for the engine's tensors: {} (blocks up to {} MiB kept in the heap)", outcome,
                NativeHeap.MMAP_THRESHOLD >> 20);
    }
}
