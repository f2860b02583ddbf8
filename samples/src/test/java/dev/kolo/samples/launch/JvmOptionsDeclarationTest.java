package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.jvm.JvmOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Kolo's JVM options are declared once, in {@link JvmOptions}; the places that cannot read a Java constant hold a
 * copy, kept equal here: the build's property for its test JVMs, the worker jar's manifest, docs/running.md.
 */
class JvmOptionsDeclarationTest {
    private static final Path ROOT = Path.of("..");

    @Test
    void theBuildsTestJvmsGetTheDeclaredOptions() throws IOException {
        assertEquals(List.of(String.join(" ", JvmOptions.all())), element(ROOT.resolve("pom.xml"), "kolo.jvm.opens"),
                "the root pom's kolo.jvm.opens");
    }

    @Test
    void theWorkerJarsManifestGrantsTheDeclaredPackages() throws IOException {
        Path pom = ROOT.resolve("samples/pom.xml");
        assertEquals(List.of(JvmOptions.manifestAddOpens()), element(pom, "Add-Opens"));
        assertEquals(List.of(JvmOptions.manifestAddExports()), element(pom, "Add-Exports"));
        assertEquals(List.of(JvmOptions.TARGET), element(pom, "Enable-Native-Access"));
    }

    @Test
    void theRunningPageListsTheDeclaredOptions() throws IOException {
        String readme = Files.readString(ROOT.resolve("docs/running.md"));
        assertTrue(readme.contains("`" + String.join(" ", JvmOptions.all()) + "`"),
                "docs/running.md lists the options as JvmOptions.all() declares them, in one code span: "
                        + String.join(" ", JvmOptions.all()));
        assertTrue(readme.contains("`Add-Opens: " + JvmOptions.manifestAddOpens() + "`")
                && readme.contains("`Add-Exports: " + JvmOptions.manifestAddExports() + "`"),
                "docs/running.md gives the manifest's attributes as declared");
    }

    /** @return the text of every element {@code name} of {@code xml}, each once in the file by the build's rules */
    private static List<String> element(Path xml, String name) throws IOException {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]*)</" + Pattern.quote(name) + ">")
                .matcher(Files.readString(xml));
        return m.results().map(r -> r.group(1).trim()).toList();
    }
}
