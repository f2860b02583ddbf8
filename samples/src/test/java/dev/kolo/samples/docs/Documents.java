package dev.kolo.samples.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's Markdown documents, as the documentation tests read them: every {@code .md} file of the repository
 * outside build output, and their fenced Java blocks with the marker line before each.
 */
final class Documents {
    /** The repository's root: a module's tests run in its folder, one below it. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Pattern MARKER = Pattern.compile("^\\s*<!-- (code|java): (.*) -->\\s*$");

    private Documents() {
    }

    /** A fenced Java block: its document, the line its code starts on, the marker before it (or null), its lines. */
    record Block(Path document, int line, String marker, List<String> lines) {
        String where() {
            return ROOT.relativize(document) + " line " + line;
        }
    }

    /** @return every Markdown file of the repository, outside build output and hidden folders */
    static List<Path> all() {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> ROOT.relativize(p).toString().split("/").length > 0)
                    .filter(p -> {
                        for (Path part : ROOT.relativize(p)) {
                            String s = part.toString();
                            if (s.equals("target") || s.startsWith(".") || s.equals("node_modules")) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the fenced Java blocks of {@code document} */
    static List<Block> javaBlocks(Path document) {
        try {
            return javaBlocks(document, Files.readAllLines(document));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the fenced Java blocks of {@code lines}, each with the marker line right before it (blank lines aside) */
    static List<Block> javaBlocks(Path document, List<String> lines) {
        List<Block> out = new ArrayList<>();
        String marker = null;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (MARKER.matcher(l).matches()) {
                marker = l.trim();
            } else if (l.trim().startsWith("```")) {
                boolean java = l.trim().equals("```java");
                List<String> body = new ArrayList<>();
                int start = i + 2;
                for (i++; i < lines.size() && !lines.get(i).trim().startsWith("```"); i++) {
                    body.add(lines.get(i));
                }
                if (java) {
                    out.add(new Block(document, start, marker, dedent(body)));
                }
                marker = null;
            } else if (!l.isBlank()) {
                marker = null;
            }
        }
        return out;
    }

    /** @return the lines with their common indentation and trailing blanks removed */
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
