package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.DocumentedSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The configuration page documents the registry's settings, as {@code worker.jar settings} prints them. The runtime sees only
 * its own settings (the other modules are not on its class path): they open its table, and the other
 * modules' follow (the samples' SettingsReadmeTest compares the whole table).
 */
class SettingsTableTest {
    @Test
    void theReadmeTableStartsWithTheRuntimesSettings() throws Exception {
        String table = DocumentedSettings.table();
        assertTrue(table.startsWith(Settings.markdownTable()), "docs/configuration.md's settings table differs from the registry: "
                + "paste the output of 'java -jar worker.jar settings'\n" + Settings.markdownTable());
    }

    /** The registry gathers the fields by reflection: its order, the documented table's, must be that of the source. */
    @Test
    void theRegistryListsTheRuntimesSettingsInTheOrderOfTheSource() throws Exception {
        String source = Files.readString(Path.of("src/main/java/dev/kolo/runtime/Settings.java"));
        Matcher m = Pattern.compile("public static final Setting<.*> (\\w+) =").matcher(source);
        List<Object> declared = new ArrayList<>();
        while (m.find()) {
            declared.add(Settings.class.getField(m.group(1)).get(null));
        }
        assertEquals(declared, List.copyOf(Settings.all()));
    }

    @Test
    void eachSettingIsDeclaredOnceWithEveryPart() {
        Set<String> names = new HashSet<>();
        Set<String> flags = new HashSet<>();
        for (Setting<?> s : Settings.all()) {
            assertTrue(names.add(s.name()), "declared twice: " + s.name());
            s.flag().ifPresent(f -> assertTrue(flags.add(f), "flag used twice: " + f));
            assertTrue(s.name().matches("KOLO_[A-Z0-9_]+"), s.name());
            assertTrue(!s.description().isBlank() && !s.accepted().isBlank(), s.name());
            if (s.defaultValue() != null) {
                s.check(cast(s.defaultValue())); // every default is a value its own check accepts
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }
}
