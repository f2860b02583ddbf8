package dev.kolo.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The settings table of the configuration page ({@value #PAGE}), between its generated-table markers. */
public final class DocumentedSettings {
    /** The page, relative to the repository's root. */
    public static final String PAGE = "docs/configuration.md";
    private static final String START = "<!-- settings: generated";
    private static final String END = "<!-- end of settings -->";

    private DocumentedSettings() {
    }

    /** @return the page's settings table (a module's tests run in its folder, below the repository's) */
    public static String table() throws IOException {
        String page = Files.readString(Path.of("..").resolve(PAGE));
        int start = page.indexOf(START);
        int end = page.indexOf(END);
        assertTrue(start >= 0 && end > start, PAGE + " marks its settings table with " + START + " and " + END);
        return page.substring(page.indexOf('\n', start) + 1, end);
    }
}
