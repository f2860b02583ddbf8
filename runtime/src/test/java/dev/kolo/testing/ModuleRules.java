package dev.kolo.testing;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The limits every Kolo module keeps, as checks that return what breaks them (empty when nothing does): no main
 * class above {@link #MAX_CLASS_LINES} lines, no package above {@link #MAX_PACKAGE_FILES} files, no import circle
 * between a module's packages, no class that refers to the class that creates it, and no fuzz-seed directory that
 * no fuzz test reads. Each module's architecture test applies them to its own sources and bytecode, so that a
 * module's build fails where it breaks one; {@code ModuleRulesTest} shows each check failing on a tree that
 * breaks it.
 */
public final class ModuleRules {
    /** Longest main source file: a class past it holds more than one concern. */
    public static final int MAX_CLASS_LINES = 500;
    /** Most files of one package ({@code package-info.java} not counted): past it, a package holds several rooms. */
    public static final int MAX_PACKAGE_FILES = 20;

    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)(?:\\.\\*)?\\s*;",
            Pattern.MULTILINE);
    private static final Pattern FUZZ_METHOD = Pattern.compile("@FuzzTest[^;{]*?\\bvoid\\s+(\\w+)\\s*\\(",
            Pattern.DOTALL);
    /** How Jazzer names a fuzz test's seed directory: the test class's simple name and this, in its package. */
    private static final String SEEDS_SUFFIX = "Inputs";

    private ModuleRules() {
    }

    /** @return each main source file under {@code sources} longer than {@code maxLines}, with its length */
    public static List<String> classesOver(Path sources, int maxLines) {
        List<String> over = new ArrayList<>();
        for (Path f : javaFiles(sources)) {
            long lines = read(f).lines().count();
            if (lines > maxLines) {
                over.add(sources.relativize(f) + " has " + lines + " lines");
            }
        }
        return over;
    }

    /**
     * @param exempt packages allowed more files (each with its reason, in the caller)
     * @return each package under {@code sources} with more than {@code maxFiles} files, package-info not counted
     */
    public static List<String> packagesOver(Path sources, int maxFiles, Set<String> exempt) {
        SortedMap<String, Integer> files = new TreeMap<>();
        for (Path f : javaFiles(sources)) {
            if (!f.getFileName().toString().equals("package-info.java")) {
                files.merge(packageOf(f), 1, Integer::sum);
            }
        }
        List<String> over = new ArrayList<>();
        files.forEach((p, n) -> {
            if (n > maxFiles && !exempt.contains(p)) {
                over.add(p + " has " + n + " files");
            }
        });
        return over;
    }

    /**
     * The circles among a module's packages, as its sources import (javadoc links included: an import is an
     * import) and its bytecode uses: each circle's packages and an arrow of each pair with the file that draws it.
     *
     * @param sources the module's main sources
     * @param classes the module's main classes (other modules' classes are ignored)
     * @param apiPackage the module's public API package, which is no node: its facade wires the internals and
     *        every layer uses its types (exceptions, tensors), as Vert.x's and Hazelcast's internals use their
     *        APIs; null when the module has none
     */
    public static List<String> importCircles(Path sources, Collection<JavaClass> classes, String apiPackage) {
        Map<String, String> files = new HashMap<>();
        for (Path f : javaFiles(sources)) {
            files.put(sources.relativize(f).toString(), read(f));
        }
        Set<String> packages = new TreeSet<>();
        files.values().forEach(text -> packages.add(packageOf(text)));
        SortedMap<String, SortedMap<String, String>> arrows = new TreeMap<>();
        files.forEach((file, text) -> {
            String from = packageOf(text);
            Matcher m = IMPORT.matcher(text);
            while (m.find()) {
                String to = longestPackage(m.group(1), packages);
                if (to != null) {
                    arrows.computeIfAbsent(from, k -> new TreeMap<>()).putIfAbsent(to, file + " imports " + m.group(1));
                }
            }
        });
        for (JavaClass c : classes) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String from = d.getOriginClass().getPackageName();
                String to = d.getTargetClass().getBaseComponentType().getPackageName();
                if (packages.contains(from) && packages.contains(to)) {
                    arrows.computeIfAbsent(from, k -> new TreeMap<>()).putIfAbsent(to, d.getDescription());
                }
            }
        }
        if (apiPackage != null) {
            arrows.values().forEach(targets -> targets.remove(apiPackage));
            arrows.remove(apiPackage);
        }
        arrows.forEach((from, targets) -> targets.remove(from));
        List<String> circles = new ArrayList<>();
        for (SortedSet<String> component : stronglyConnected(arrows)) {
            StringBuilder s = new StringBuilder("circle " + component + ":");
            for (String from : component) {
                arrows.getOrDefault(from, new TreeMap<>()).forEach((to, why) -> {
                    if (component.contains(to)) {
                        s.append("\n    ").append(from).append(" -> ").append(to).append(" (").append(why).append(')');
                    }
                });
            }
            circles.add(s.toString());
        }
        return circles;
    }

    /**
     * @return each class that refers to a class that creates it (calls its constructor): the created one should see
     *         the narrow facts it needs, handed to it, not its creator. Classes are compared by their top-level class
     *         (a nested class is its file's); only classes of {@code classes} count.
     */
    public static List<String> creatorReferences(Collection<JavaClass> classes) {
        Map<String, Set<String>> uses = new HashMap<>();
        Map<String, SortedSet<String>> creators = new TreeMap<>();
        Set<String> names = new TreeSet<>();
        classes.forEach(c -> names.add(topLevel(c).getName()));
        for (JavaClass c : classes) {
            String from = topLevel(c).getName();
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = topLevel(d.getTargetClass().getBaseComponentType()).getName();
                if (!to.equals(from) && names.contains(to)) {
                    uses.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
                }
            }
            for (JavaConstructorCall call : c.getConstructorCallsFromSelf()) {
                String created = topLevel(call.getTargetOwner()).getName();
                if (!created.equals(from) && names.contains(created)) {
                    creators.computeIfAbsent(created, k -> new TreeSet<>()).add(from);
                }
            }
        }
        List<String> back = new ArrayList<>();
        creators.forEach((created, by) -> by.forEach(creator -> {
            if (uses.getOrDefault(created, Set.of()).contains(creator)) {
                back.add(created + " refers to " + creator + ", which creates it");
            }
        }));
        return back;
    }

    /**
     * @param testResources the module's {@code src/test/resources}
     * @param testSources the module's {@code src/test/java}
     * @return each fuzz-seed directory ({@code <package>/<Test>Inputs/<method>}) that names no {@code @FuzzTest}
     *         method of a test class in that package: its seeds would never be run
     */
    public static List<String> unmatchedFuzzSeeds(Path testResources, Path testSources) {
        List<String> unmatched = new ArrayList<>();
        if (!Files.isDirectory(testResources)) {
            return unmatched;
        }
        try (Stream<Path> dirs = Files.walk(testResources)) {
            for (Path dir : dirs.filter(Files::isDirectory).sorted().toList()) {
                String name = dir.getFileName().toString();
                if (!name.endsWith("FuzzTest" + SEEDS_SUFFIX)) {
                    continue;
                }
                Path relative = testResources.relativize(dir);
                String testClass = name.substring(0, name.length() - SEEDS_SUFFIX.length());
                Path source = testSources.resolve(relative.resolveSibling(testClass + ".java"));
                Set<String> methods = new TreeSet<>();
                if (Files.isRegularFile(source)) {
                    Matcher m = FUZZ_METHOD.matcher(read(source));
                    while (m.find()) {
                        methods.add(m.group(1));
                    }
                }
                try (Stream<Path> children = Files.list(dir)) {
                    List<Path> seeds = children.sorted().toList();
                    if (seeds.isEmpty() && methods.isEmpty()) {
                        unmatched.add(relative + ": no fuzz test " + source);
                    }
                    for (Path seedDir : seeds) {
                        if (!Files.isDirectory(seedDir) || !methods.contains(seedDir.getFileName().toString())) {
                            unmatched.add(testResources.relativize(seedDir) + ": no @FuzzTest method "
                                    + seedDir.getFileName() + " in " + source + " (found " + methods + ")");
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return unmatched;
    }

    /** Fails naming every violation of one rule, or passes when there is none. */
    public static void assertNone(String rule, List<String> violations) {
        if (!violations.isEmpty()) {
            throw new AssertionError(rule + ":\n  " + String.join("\n  ", violations));
        }
    }

    /** @return the directory {@code path} of the module under test (tests run in the module's directory) */
    public static Path module(String path) {
        Path p = Path.of(path);
        if (!Files.isDirectory(p)) {
            throw new AssertionError(p.toAbsolutePath() + " is no directory: the rule would pass vacuously");
        }
        return p;
    }

    /** Tarjan's strongly connected components of more than one node. */
    private static List<SortedSet<String>> stronglyConnected(SortedMap<String, SortedMap<String, String>> arrows) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<SortedSet<String>> components = new ArrayList<>();
        int[] counter = {0};
        for (String v : arrows.keySet()) {
            if (!index.containsKey(v)) {
                connect(v, arrows, index, low, stack, onStack, components, counter);
            }
        }
        return components;
    }

    private static void connect(String v, SortedMap<String, SortedMap<String, String>> arrows,
            Map<String, Integer> index, Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
            List<SortedSet<String>> components, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]++);
        stack.push(v);
        onStack.add(v);
        for (String w : arrows.getOrDefault(v, new TreeMap<>()).keySet()) {
            if (!index.containsKey(w)) {
                connect(w, arrows, index, low, stack, onStack, components, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            SortedSet<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                components.add(component);
            }
        }
    }

    private static String longestPackage(String name, Set<String> packages) {
        for (String p = name; ; p = p.substring(0, p.lastIndexOf('.'))) {
            if (packages.contains(p)) {
                return p;
            }
            if (!p.contains(".")) {
                return null;
            }
        }
    }

    private static JavaClass topLevel(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    private static List<Path> javaFiles(Path sources) {
        try (Stream<Path> files = Files.walk(sources)) {
            return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String packageOf(Path javaFile) {
        return packageOf(read(javaFile));
    }

    private static String packageOf(String text) {
        Matcher m = PACKAGE.matcher(text);
        return m.find() ? m.group(1) : "";
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
