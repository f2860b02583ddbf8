package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointSettings;
import dev.kolo.elastic.ElasticSettings;
import dev.kolo.runtime.Setting;
import dev.kolo.runtime.Settings;
import dev.kolo.testing.DocumentedSettings;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The docs/configuration.md's settings table is the whole registry, every module's settings included, as
 * {@code worker.jar settings} prints it. Here, unlike in the runtime, every module is on the class path.
 */
class SettingsReadmeTest {
    @Test
    void theReadmeTableIsTheRegistry() throws Exception {
        String table = DocumentedSettings.table();
        assertEquals(Settings.markdownTable(), table, "docs/configuration.md's settings table differs from the registry: paste the "
                + "output of 'java -jar worker.jar settings'");
    }

    /** The runtime's SettingsTableTest checks its own; these are every module's, as the registry holds them. */
    @Test
    void everySettingHasEveryPartAndADefaultItsOwnCheckAccepts() {
        for (Setting<?> s : Settings.all()) {
            assertTrue(!s.description().isBlank() && !s.accepted().isBlank(), s.name());
            if (s.defaultValue() != null) {
                s.check(cast(s.defaultValue()));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }

    @Test
    void theModulesSettingsFollowTheRuntimesInTheOrderOfTheModulesNames() {
        List<Setting<?>> all = Settings.all();
        assertEquals(List.of(CheckpointSettings.CHECKPOINT_DIR, ElasticSettings.WORKER_ID, ElasticSettings.STRAGGLER,
                ElasticSettings.STRAGGLER_RATIO, ElasticSettings.STRAGGLER_WINDOW, ElasticSettings.STRAGGLER_EVICT_RATIO),
                all.subList(all.size() - 6, all.size()));
    }
}
