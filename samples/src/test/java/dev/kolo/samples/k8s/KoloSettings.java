package dev.kolo.samples.k8s;

import dev.kolo.runtime.Setting;
import dev.kolo.runtime.Settings;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The {@code KOLO_*} settings a worker reads: the names in the settings registry. */
final class KoloSettings {
    private KoloSettings() {
    }

    /** @return every name a manifest may set */
    static Set<String> allowed() {
        return Settings.all().stream().map(Setting::name).collect(Collectors.toCollection(TreeSet::new));
    }
}
