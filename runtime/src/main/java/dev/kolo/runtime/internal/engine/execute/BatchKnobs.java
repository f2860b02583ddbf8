package dev.kolo.runtime.internal.engine.execute;

/**
 * The tuned knobs the execution reads and feeds: the fusion threshold in force, and the bytes each completed op
 * moved (the tuner's sample). The agreement round decides the values; the execution only reads them.
 */
public interface BatchKnobs {
    /** @return the largest fused batch, in bytes, in force now */
    int fusionThreshold();

    /** Collectives of {@code bytes} completed on this rank. */
    void completed(long bytes);
}
