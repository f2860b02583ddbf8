package dev.kolo.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The settings table of the repository's README, between its generated-table markers. */
public final class ReadmeSettings {
    private static final String START = "<!-- settings: generated";
    private static final String END = "<!-- end of settings -->";

    private ReadmeSettings() {
    }

    /** @return README.md's settings table (a module's tests run in its folder, below the repository's) */
    public static String table() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf(START);
        int end = readme.indexOf(END);
        assertTrue(start >= 0 && end > start, "README.md marks its settings table with " + START + " and " + END);
        return readme.substring(readme.indexOf('\n', start) + 1, end);
    }
}
