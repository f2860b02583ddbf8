package dev.kolo.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of the repository's Markdown resolves: to a file or folder inside the repository, and its
 * {@code #anchor} to a heading of the Markdown file it names (as GitHub makes anchors from headings). Links to the
 * web are left alone; nothing may point outside the repository, in a link or in the text.
 */
class DocumentLinksTest {
    /** {@code [text](target)} and {@code ![alt](target)}, the target without a title; and HTML {@code src}/{@code href}. */
    static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)|(?:src|href)=\"([^\"]+)\"");

    @Test
    void everyRelativeLinkAndAnchorResolvesInsideTheRepository() throws IOException {
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path doc : Documents.all()) {
            List<String> lines = Files.readAllLines(doc);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = LINK.matcher(lines.get(i));
                while (m.find()) {
                    String target = m.group(1) != null ? m.group(1) : m.group(2);
                    String problem = problem(doc, target);
                    links++;
                    if (problem != null) {
                        broken.add(Documents.ROOT.relativize(doc) + " line " + (i + 1) + ": " + target + ": " + problem);
                    }
                }
                if (lines.get(i).contains("../shared/")) {
                    broken.add(Documents.ROOT.relativize(doc) + " line " + (i + 1) + ": names ../shared/, outside the "
                            + "repository: a reader's clone has no such folder");
                }
            }
        }
        assertTrue(links >= 50, "the documents link to each other (" + links + " links found)");
        if (!broken.isEmpty()) {
            fail(broken.size() + " broken link(s):\n" + String.join("\n", broken));
        }
    }

    /** @return why {@code target}, linked from {@code doc}, does not resolve; null if it does or is a web link */
    static String problem(Path doc, String target) throws IOException {
        if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
            return null; // http:, https:, mailto:
        }
        String path = target;
        String anchor = null;
        int hash = target.indexOf('#');
        if (hash >= 0) {
            path = target.substring(0, hash);
            anchor = target.substring(hash + 1);
        }
        Path file = path.isEmpty() ? doc : doc.getParent().resolve(path).normalize();
        if (!file.startsWith(Documents.ROOT)) {
            return "points outside the repository";
        }
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (anchor != null && !anchor.isEmpty()) {
            if (!file.toString().endsWith(".md")) {
                return null; // an anchor into a source file (a line): not checked
            }
            if (!anchors(Files.readAllLines(file)).contains(anchor)) {
                return "no heading makes the anchor #" + anchor + " in " + Documents.ROOT.relativize(file);
            }
        }
        return null;
    }

    /** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces to '-', repeats -1, -2. */
    static Set<String> anchors(List<String> lines) {
        Set<String> out = new HashSet<>();
        boolean fenced = false;
        for (String l : lines) {
            if (l.trim().startsWith("```")) {
                fenced = !fenced;
            }
            if (fenced || !l.startsWith("#")) {
                continue;
            }
            String text = l.replaceFirst("^#+\\s*", "").trim().toLowerCase(Locale.ROOT)
                    .replaceAll("`", "").replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
            String anchor = text;
            for (int n = 1; !out.add(anchor); n++) {
                anchor = text + "-" + n;
            }
        }
        return out;
    }

    @Test
    void anchorsAreMadeAsGitHubMakesThem() throws IOException {
        Set<String> a = anchors(List.of("# Kolo", "## Ranks on one host, and several hosts", "### `KOLO_SHM`: why?",
                "```", "# not a heading", "```", "## Kolo"));
        assertEquals(Set.of("kolo", "ranks-on-one-host-and-several-hosts", "kolo_shm-why", "kolo-1"), a);
        Path readme = Documents.ROOT.resolve("README.md");
        assertEquals("no such file", problem(readme, "docs/nothing-here.md"));
        assertEquals("points outside the repository", problem(readme, "../shared/bench/run-mpi.sh"));
        assertTrue(problem(readme, "#no-such-heading").startsWith("no heading makes the anchor"));
        assertEquals(null, problem(readme, "https://example.org/x#y"));
    }
}
