package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.KoloException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tensors failed by the stall inspector while this rank had not submitted them: its late submit fails. The newest
 * {@link #KEPT} only: a rank that never submits them must not keep every name (an older one submitted late then
 * waits and stalls again).
 */
final class StalledNames {
    static final int KEPT = 1024;
    private final Map<String, KoloException> failures = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, KoloException> eldest) {
            return size() > KEPT;
        }
    };

    /** The stall inspector failed {@code name}, which this rank has not submitted. */
    void put(String name, KoloException failure) {
        failures.put(name, failure);
    }

    /** @return the failure that a late submit of {@code name} fails with, or null; it fails once */
    KoloException take(String name) {
        return failures.remove(name);
    }

    int size() {
        return failures.size();
    }
}
