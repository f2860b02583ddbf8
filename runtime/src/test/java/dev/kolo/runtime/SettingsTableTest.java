package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * The README documents the registry's settings, as {@code worker.jar settings} prints them. The runtime sees only
 * its own settings (the other modules are not on its class path): they open the README's table, and the other
 * modules' follow (the samples' SettingsReadmeTest compares the whole table).
 */
class SettingsTableTest {
    private static final String START = "<!-- settings: generated";
    private static final String END = "<!-- end of settings -->";

    @Test
    void theReadmeTableStartsWithTheRuntimesSettings() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf(START);
        int end = readme.indexOf(END);
        assertTrue(start >= 0 && end > start, "README.md marks its settings table with " + START + " and " + END);
        String table = readme.substring(readme.indexOf('\n', start) + 1, end);
        assertTrue(table.startsWith(Settings.markdownTable()), "README's settings table differs from the registry: "
                + "paste the output of 'java -jar worker.jar settings'\n" + Settings.markdownTable());
    }

    /** The registry gathers the fields by reflection: its order, the README's, must be that of the source. */
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
