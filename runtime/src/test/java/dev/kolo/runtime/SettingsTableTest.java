package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The README documents exactly the registry's settings, as {@code worker.jar settings} prints them. */
class SettingsTableTest {
    private static final String START = "<!-- settings: generated";
    private static final String END = "<!-- end of settings -->";

    @Test
    void theReadmeTableIsTheRegistry() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf(START);
        int end = readme.indexOf(END);
        assertTrue(start >= 0 && end > start, "README.md marks its settings table with " + START + " and " + END);
        String table = readme.substring(readme.indexOf('\n', start) + 1, end);
        assertEquals(Settings.markdownTable(), table,
                "README's settings table differs from the registry: paste the output of 'java -jar worker.jar settings'");
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
