package dev.kolo.spark.internal;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Setting;
import dev.kolo.runtime.Settings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kolo's settings given in the Spark conf: {@code spark.kolo.X} is the setting whose system property is
 * {@code kolo.X} ({@code spark.kolo.op.timeout} is {@code KOLO_OP_TIMEOUT}). Read on the driver, where a bad name
 * or value fails the run before any task starts, and applied on the executors over their environment.
 */
public final class SparkSettings {
    /** The prefix of Kolo's settings in the Spark conf. */
    public static final String PREFIX = "spark.kolo.";

    /**
     * What the distributor decides itself: the stage gives the ranks, the addresses and the secret, and CPU binding
     * would bind the whole executor process, which runs other tasks too.
     */
    static final Set<Setting<?>> OWNED = Set.of(Settings.NP, Settings.MIN_NP, Settings.MAX_NP, Settings.DISCOVERY,
            Settings.MEMBERS, Settings.RANK_HINT, Settings.CLUSTER_PORT, Settings.JOB, Settings.JOB_SECRET,
            Settings.JOB_SECRET_FILE, Settings.CPU_BIND, Settings.SERVICE_DNS, Settings.SERVICE_PORT);

    private SparkSettings() {
    }

    /**
     * Checks the {@code spark.kolo.*} entries of a Spark conf.
     *
     * @param conf every entry of the conf whose key starts with {@link #PREFIX}, prefix included
     * @return the entries keyed by setting name ({@code KOLO_OP_TIMEOUT}), values as given
     * @throws IllegalArgumentException naming an unknown key, a setting the distributor sets itself, or a value
     *                                  the setting does not accept
     */
    public static Map<String, String> read(Map<String, String> conf) {
        Map<String, Setting<?>> byProperty = new TreeMap<>();
        for (Setting<?> s : Settings.all()) {
            byProperty.put(s.property(), s);
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(conf).entrySet()) {
            String key = e.getKey();
            Setting<?> s = byProperty.get("kolo." + key.substring(PREFIX.length()));
            if (s == null) {
                throw new IllegalArgumentException(key + " is not a Kolo setting: spark.kolo.X names the setting "
                        + "whose property is kolo.X (spark.kolo.op.timeout is KOLO_OP_TIMEOUT; see "
                        + "docs/configuration.md)");
            }
            if (OWNED.contains(s)) {
                throw new IllegalArgumentException(key + " (" + s.name() + ") is set by KoloDistributor for each "
                        + "stage: the number of ranks is numProcesses(n), the addresses and the job secret come "
                        + "from the stage itself; remove it from the Spark conf");
            }
            s.parse(e.getValue(), key); // fails here, on the driver, naming the key
            out.put(s.name(), e.getValue());
        }
        return out;
    }

    /** Sets the entries {@link #read} returned on a builder. */
    static void apply(Map<String, String> settings, KoloConfig.Builder builder) {
        for (Setting<?> s : Settings.all()) {
            String v = settings.get(s.name());
            if (v != null) {
                set(builder, s, v);
            }
        }
    }

    /**
     * The settings of modules that read their own from system properties ({@code KOLO_CHECKPOINT_DIR}): those of
     * the entries that {@link KoloConfig} does not hold.
     */
    static List<Setting<?>> moduleSettings(Map<String, String> settings) {
        return Settings.all().stream().filter(s -> settings.containsKey(s.name()) && !isRuntimeSetting(s)).toList();
    }

    private static boolean isRuntimeSetting(Setting<?> s) {
        for (java.lang.reflect.Field f : Settings.class.getFields()) {
            try {
                if (f.get(null) == s) {
                    return true;
                }
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return false;
    }

    private static <T> void set(KoloConfig.Builder builder, Setting<T> s, String text) {
        builder.set(s, s.parse(text, PREFIX + s.property().substring("kolo.".length())));
    }
}
