package dev.kolo.samples.k8s;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The {@code KOLO_*} settings a worker reads, taken from the sources themselves: every string literal that
 * is exactly a setting name ({@code "KOLO_NP"}) in the main code of the modules in worker.jar. KoloConfig
 * reads its settings that way ({@code s.integer("KOLO_NP")}); the checkpoint and kernel settings too.
 */
final class KoloSettings {
    private static final Pattern NAME_LITERAL = Pattern.compile("\"(KOLO_[A-Z0-9_]+)\"");
    private static final String[] MODULES = {"kernels", "runtime", "checkpoint", "elastic", "samples"};

    /**
     * Settings in the public contract (shared/API.md, "Settings") that no code reads yet. The manifests may
     * set them so that deployments need no change when they land; any other unknown name fails the tests.
     * When the code reads one, it becomes known through the sources and can be removed here.
     */
    static final Set<String> CONTRACTED_NOT_YET_READ = Set.of();

    private KoloSettings() {
    }

    /** @return setting name to the first source file that reads it */
    static Map<String, Path> readBySources() {
        Map<String, Path> out = new TreeMap<>();
        Path root = Manifests.repoRoot();
        for (String module : MODULES) {
            Path src = root.resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(src)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(src)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    Matcher m = NAME_LITERAL.matcher(Files.readString(f));
                    while (m.find()) {
                        out.putIfAbsent(m.group(1), root.relativize(f));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    /** @return every name a manifest may set: read by the sources, or contracted and pending */
    static Set<String> allowed() {
        Set<String> s = new TreeSet<>(readBySources().keySet());
        s.addAll(CONTRACTED_NOT_YET_READ);
        return s;
    }
}
