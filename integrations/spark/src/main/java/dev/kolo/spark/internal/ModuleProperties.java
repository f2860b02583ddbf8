package dev.kolo.spark.internal;

import dev.kolo.runtime.Setting;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The modules' settings given as {@code spark.kolo.*} ({@code KOLO_CHECKPOINT_DIR}), set as system properties of
 * the executor JVM while ranks run in it: those modules read their settings from the properties. Counted, since
 * several ranks of a run may share an executor: the first sets a property, the last restores what was there.
 */
final class ModuleProperties {
    /** Per property: the ranks using it and the value before the first. */
    private static final Map<String, Integer> USERS = new HashMap<>();
    private static final Map<String, String> BEFORE = new HashMap<>();

    private ModuleProperties() {
    }

    static synchronized void acquire(List<Setting<?>> settings, Map<String, String> values) {
        for (Setting<?> s : settings) {
            String p = s.property();
            if (USERS.merge(p, 1, Integer::sum) == 1) {
                BEFORE.put(p, System.getProperty(p));
            }
            System.setProperty(p, values.get(s.name()));
        }
    }

    static synchronized void release(List<Setting<?>> settings) {
        for (Setting<?> s : settings) {
            String p = s.property();
            if (USERS.merge(p, -1, Integer::sum) == 0) {
                USERS.remove(p);
                String v = BEFORE.remove(p);
                if (v == null) {
                    System.clearProperty(p);
                } else {
                    System.setProperty(p, v);
                }
            }
        }
    }
}
