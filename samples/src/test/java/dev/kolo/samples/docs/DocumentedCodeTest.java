package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Java in the documents compiles: a fenced {@code java} block preceded by {@code <!-- code: PATH#REGION -->} must
 * equal, line for line, the region of that source file between {@code // example:REGION} and {@code // example:end}
 * (its indentation removed), and the build compiles the file. The documents' sections listed in {@link #CHECKED}
 * may hold no Java block without such a marker.
 */
class DocumentedCodeTest {
    static final Path ROOT = Path.of("..");
    static final Pattern MARKER = Pattern.compile("<!-- code: (\\S+)#(\\S+) -->");
    /** Documents, and the heading of the section in them (empty: the whole document), whose Java must all compile. */
    static final String[][] CHECKED = {{"README.md", "## Training a DJL model"}, {"samples/djl-example/README.md", ""}};

    /** A fenced Java block and the marker before it, if any. */
    record Block(String document, int line, String marker, List<String> lines) {
    }

    @Test
    void everyMarkedBlockEqualsItsRegionOfACompiledFile() throws IOException {
        int checked = 0;
        for (String[] doc : CHECKED) {
            for (Block b : blocks(doc[0], Files.readAllLines(ROOT.resolve(doc[0])), doc[1])) {
                assertTrue(b.marker() != null, b.document() + " line " + b.line() + ": a Java block with no "
                        + "'<!-- code: PATH#REGION -->' before it: copy it from a compiled file and name the region");
                Matcher m = MARKER.matcher(b.marker());
                assertTrue(m.find());
                assertEquals(region(Files.readAllLines(ROOT.resolve(m.group(1))), m.group(2), m.group(1)), b.lines(),
                        b.document() + " line " + b.line() + " differs from " + m.group(1) + "#" + m.group(2));
                checked++;
            }
        }
        assertTrue(checked >= 2, "the DJL section and the example's README show code (" + checked + " blocks)");
    }

    @Test
    void aBlockThatDiffersFromItsRegionOrHasNoMarkerIsFound() {
        List<String> source = List.of("class A {", "    // example:run", "    void run() {", "    }",
                "    // example:end", "}");
        assertEquals(List.of("void run() {", "}"), region(source, "run", "A.java"));
        List<String> doc = List.of("# A", "## Part", "<!-- code: A.java#run -->", "```java", "void run() {", "}",
                "```", "```java", "x();", "```", "## Other", "```java", "y();", "```");
        List<Block> blocks = blocks("doc.md", doc, "## Part");
        assertEquals(2, blocks.size(), "only the section's blocks");
        assertEquals(List.of("void run() {", "}"), blocks.get(0).lines());
        assertFalse(blocks.get(0).marker() == null);
        assertEquals(null, blocks.get(1).marker(), "a block without a marker is seen as such");
        assertThrows(AssertionError.class, () -> region(source, "missing", "A.java"));
    }

    /** The Java blocks of {@code lines} under {@code heading} (to the next heading of its level or above). */
    static List<Block> blocks(String document, List<String> lines, String heading) {
        List<Block> out = new ArrayList<>();
        boolean inSection = heading.isEmpty();
        int level = heading.isEmpty() ? 0 : heading.indexOf(' ');
        String marker = null;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (!heading.isEmpty() && l.startsWith("#")) {
                int lineLevel = l.indexOf(' ');
                if (l.equals(heading)) {
                    inSection = true;
                } else if (inSection && lineLevel > 0 && lineLevel <= level) {
                    inSection = false;
                }
            }
            if (MARKER.matcher(l).find()) {
                marker = l;
            } else if (l.trim().startsWith("```java")) {
                List<String> body = new ArrayList<>();
                int start = i + 1;
                for (i++; i < lines.size() && !lines.get(i).trim().startsWith("```"); i++) {
                    body.add(lines.get(i));
                }
                if (inSection) {
                    out.add(new Block(document, start, marker, dedent(body)));
                }
                marker = null;
            } else if (!l.isBlank()) {
                marker = null;
            }
        }
        return out;
    }

    /** The lines between {@code // example:NAME} and the next {@code // example:end}, indentation removed. */
    static List<String> region(List<String> source, String name, String file) {
        int from = -1;
        for (int i = 0; i < source.size(); i++) {
            if (source.get(i).trim().equals("// example:" + name)) {
                from = i + 1;
            } else if (from >= 0 && source.get(i).trim().equals("// example:end")) {
                return dedent(source.subList(from, i));
            }
        }
        throw new AssertionError(file + " has no region '// example:" + name + "' ... '// example:end'");
    }

    static List<String> dedent(List<String> lines) {
        int indent = Integer.MAX_VALUE;
        for (String l : lines) {
            if (!l.isBlank()) {
                indent = Math.min(indent, l.length() - l.stripLeading().length());
            }
        }
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            out.add(l.isBlank() ? "" : l.substring(indent).stripTrailing());
        }
        return out;
    }
}
