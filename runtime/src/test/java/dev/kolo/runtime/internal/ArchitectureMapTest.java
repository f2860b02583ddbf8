package dev.kolo.runtime.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md's package dependency map, compared with the runtime's bytecode: every package of the runtime's
 * main classes and every arrow between packages must be in the map, and the map may hold nothing else.
 *
 * <p>The map is the first fenced block after the heading {@value #HEADING}: one line per package of
 * {@code dev.kolo.runtime}, {@code package -> target, target, ...} (nothing after the arrow when the package uses no
 * other). Names are relative to {@code dev.kolo.runtime} ({@code internal.engine}, {@code train}); {@value #API} is
 * {@code dev.kolo.runtime} itself, the public API; other Kolo modules' packages are named in full
 * ({@code dev.kolo.kernels}) and appear as targets only; third-party and JDK packages are left out. An arrow means
 * some class of the package uses some class of the target (a field, a call, a signature, an annotation), as
 * ArchUnit sees it. On failure the message names each difference and prints the whole map of the code, ready to
 * paste over the block.
 */
class ArchitectureMapTest {
    static final String ROOT = "dev.kolo.runtime";
    /** The name of {@code dev.kolo.runtime} itself in the map; no Java package can be called that. */
    static final String API = "(api)";
    static final String HEADING = "### Package dependencies";
    private static final Path DOC = Path.of("..", "ARCHITECTURE.md");
    private static final Pattern LINE = Pattern.compile("(\\S+)\\s*->\\s*(.*)");
    private static final Pattern NAME = Pattern.compile("\\(api\\)|[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*");

    /** (api) first, then the runtime's packages, then other modules' packages; each group alphabetically. */
    static final Comparator<String> ORDER = Comparator.comparingInt(ArchitectureMapTest::group)
            .thenComparing(Comparator.naturalOrder());

    @Test
    void architectureMdMapsTheRuntimesPackagesAsTheyAre() throws IOException {
        JavaClasses runtime = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT);
        SortedMap<String, SortedSet<String>> actual = actualMap(runtime);
        assertTrue(actual.containsKey(API) && actual.keySet().stream().anyMatch(p -> p.startsWith("internal.")),
                "no runtime class was imported: the comparison would pass vacuously (" + actual.keySet() + ")");
        SortedMap<String, SortedSet<String>> documented = parse(Files.readString(DOC));
        List<String> differences = differences(documented, actual);
        if (!differences.isEmpty()) {
            fail(failureMessage(differences, actual));
        }
    }

    @Test
    void parsesTheBlockUnderTheHeadingOnly() {
        String doc = String.join("\n", "# Title", "```text", "ignored -> block", "```", HEADING, "",
                "Some words.", "", "```text", "(api) -> internal.a, dev.kolo.kernels", "internal.a -> (api)",
                "", "internal.b ->", "```", "```text", "later -> block", "```");
        SortedMap<String, SortedSet<String>> map = parse(doc);
        assertEquals(List.of(API, "internal.a", "internal.b"), List.copyOf(map.keySet()));
        assertEquals(List.of("internal.a", "dev.kolo.kernels"), List.copyOf(map.get(API)));
        assertEquals(List.of(API), List.copyOf(map.get("internal.a")));
        assertTrue(map.get("internal.b").isEmpty());
    }

    @Test
    void refusesAMalformedMap() {
        String[] bad = {
            "internal.a uses internal.b", // no arrow
            "internal.a -> internal.b,", // empty target
            "internal.a -> internal.b\ninternal.a -> internal.c", // package twice
            "internal.a -> internal.b, internal.b", // target twice
            "internal.a -> internal.a", // arrow to itself
            "Internal.A -> internal.b", // not a package name
        };
        for (String block : bad) {
            String doc = HEADING + "\n```text\n" + block + "\n```\n";
            assertThrows(IllegalArgumentException.class, () -> parse(doc), block);
        }
        assertThrows(IllegalArgumentException.class, () -> parse("# no heading\n```text\na -> b\n```\n"));
        assertThrows(IllegalArgumentException.class, () -> parse(HEADING + "\n```text\na -> b\n"));
    }

    @Test
    void namesEveryMissingAndExtraPackageAndArrow() {
        SortedMap<String, SortedSet<String>> documented = parse(HEADING
                + "\n```\n(api) -> internal.a, internal.gone\ninternal.a -> (api)\ninternal.gone ->\n```\n");
        SortedMap<String, SortedSet<String>> actual = parse(HEADING
                + "\n```\n(api) -> internal.a, internal.b\ninternal.a ->\ninternal.b -> dev.kolo.kernels\n```\n");
        assertEquals(List.of(
                "missing package: internal.b (in the code, not in the map)",
                "extra package: internal.gone (in the map, not in the code)",
                "missing arrow: (api) -> internal.b",
                "missing arrow: internal.b -> dev.kolo.kernels",
                "extra arrow: (api) -> internal.gone",
                "extra arrow: internal.a -> (api)"), differences(documented, actual));
    }

    @Test
    void thePrintedMapReadsBackAsTheSameMap() {
        SortedMap<String, SortedSet<String>> map = parse(HEADING
                + "\n```\ninternal.b -> dev.kolo.kernels, (api)\n(api) -> internal.b, internal.a\ninternal.a ->\n```\n");
        String printed = render(map);
        assertEquals("(api) -> internal.a, internal.b\ninternal.a ->\ninternal.b -> (api), dev.kolo.kernels\n", printed);
        assertEquals(map, parse(HEADING + "\n```text\n" + printed + "```\n"));
    }

    /** The package graph of {@code classes}: every package of {@link #ROOT} and its arrows (see the class doc). */
    static SortedMap<String, SortedSet<String>> actualMap(JavaClasses classes) {
        SortedMap<String, SortedSet<String>> map = new TreeMap<>(ORDER);
        for (JavaClass c : classes) {
            String from = node(c.getPackageName());
            if (from == null || group(from) == 2) {
                continue;
            }
            SortedSet<String> targets = map.computeIfAbsent(from, k -> new TreeSet<>(ORDER));
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = node(d.getTargetClass().getBaseComponentType().getPackageName());
                if (to != null && !to.equals(from)) {
                    targets.add(to);
                }
            }
        }
        return map;
    }

    /** A package's name in the map, or null for a package the map leaves out (JDK, third party). */
    static String node(String pkg) {
        if (pkg.equals(ROOT)) {
            return API;
        }
        if (pkg.startsWith(ROOT + ".")) {
            return pkg.substring(ROOT.length() + 1);
        }
        if (pkg.startsWith("dev.kolo.")) {
            return pkg;
        }
        return null;
    }

    private static int group(String node) {
        if (node.equals(API)) {
            return 0;
        }
        return node.startsWith("dev.kolo.") ? 2 : 1;
    }

    /** Reads the map from the first fenced block after the line {@value #HEADING}. */
    static SortedMap<String, SortedSet<String>> parse(String markdown) {
        List<String> lines = markdown.lines().toList();
        int i = lines.indexOf(HEADING);
        if (i < 0) {
            throw new IllegalArgumentException("ARCHITECTURE.md has no line '" + HEADING + "'");
        }
        while (i < lines.size() && !lines.get(i).startsWith("```")) {
            i++;
        }
        if (i == lines.size()) {
            throw new IllegalArgumentException("no fenced block (```) after '" + HEADING + "'");
        }
        SortedMap<String, SortedSet<String>> map = new TreeMap<>(ORDER);
        for (i++; ; i++) {
            if (i == lines.size()) {
                throw new IllegalArgumentException("the block after '" + HEADING + "' is not closed with ```");
            }
            String line = lines.get(i).trim();
            if (line.startsWith("```")) {
                return map;
            }
            if (line.isEmpty()) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                throw new IllegalArgumentException("not 'package -> target, ...': " + line);
            }
            String from = name(m.group(1), line);
            SortedSet<String> targets = new TreeSet<>(ORDER);
            if (map.put(from, targets) != null) {
                throw new IllegalArgumentException(from + " has two lines: " + line);
            }
            String rest = m.group(2).trim();
            if (rest.isEmpty()) {
                continue;
            }
            for (String t : rest.split(",", -1)) {
                String to = name(t.trim(), line);
                if (to.equals(from) || !targets.add(to)) {
                    throw new IllegalArgumentException("an arrow to itself or a target twice: " + line);
                }
            }
        }
    }

    private static String name(String s, String line) {
        if (!NAME.matcher(s).matches()) {
            throw new IllegalArgumentException("'" + s + "' is not a package name (or " + API + ") in: " + line);
        }
        return s;
    }

    /** Each difference in words: packages first, then arrows; missing (in the code only) before extra. */
    static List<String> differences(Map<String, SortedSet<String>> documented,
                                    Map<String, SortedSet<String>> actual) {
        List<String> out = new ArrayList<>();
        actual.keySet().stream().filter(p -> !documented.containsKey(p))
                .forEach(p -> out.add("missing package: " + p + " (in the code, not in the map)"));
        documented.keySet().stream().filter(p -> !actual.containsKey(p))
                .forEach(p -> out.add("extra package: " + p + " (in the map, not in the code)"));
        SortedSet<String> has = arrows(actual);
        SortedSet<String> says = arrows(documented);
        has.stream().filter(a -> !says.contains(a)).forEach(a -> out.add("missing arrow: " + a));
        says.stream().filter(a -> !has.contains(a)).forEach(a -> out.add("extra arrow: " + a));
        return out;
    }

    private static SortedSet<String> arrows(Map<String, SortedSet<String>> map) {
        SortedSet<String> out = new TreeSet<>(Comparator.comparing((String a) -> a.substring(0, a.indexOf(" -> ")), ORDER)
                .thenComparing(a -> a.substring(a.indexOf(" -> ") + 4), ORDER));
        map.forEach((from, targets) -> targets.forEach(to -> out.add(from + " -> " + to)));
        return out;
    }

    /** The block's lines for {@code map}, in the map's order. */
    static String render(Map<String, SortedSet<String>> map) {
        StringBuilder b = new StringBuilder();
        map.forEach((from, targets) -> b.append(from).append(" ->")
                .append(targets.isEmpty() ? "" : " " + String.join(", ", targets)).append('\n'));
        return b.toString();
    }

    private static String failureMessage(List<String> differences, SortedMap<String, SortedSet<String>> actual) {
        return "ARCHITECTURE.md's package map (the block under '" + HEADING + "') differs from the runtime's bytecode:\n  "
                + String.join("\n  ", differences)
                + "\nThe map of the code as it is, to paste over the block's lines:\n\n```text\n" + render(actual)
                + "```\n";
    }
}
