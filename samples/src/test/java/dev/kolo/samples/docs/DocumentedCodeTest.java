package dev.kolo.samples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every fenced {@code java} block of the repository's Markdown compiles against the modules, in one of three ways:
 * <ul>
 *   <li>{@code <!-- code: PATH#REGION -->} before it: it equals, line for line, the region of that source file
 *       between {@code // example:REGION} and {@code // example:end} (indentation removed), which the build compiles;
 *   <li>{@code <!-- java: fragment PARAMETERS -->}: a deliberately partial block (statements), compiled inside a
 *       method that takes the parameters named (e.g. {@code Kolo kolo, float[] gradient}), with the imports of
 *       {@link #IMPORTS}; {@code <!-- java: members -->}: declarations, compiled inside a class;
 *   <li>no marker: a whole compilation unit (imports and a class), compiled as it is.
 * </ul>
 * The compiler runs in this JVM with the test class path (every module, DJL included).
 */
class DocumentedCodeTest {
    static final Pattern CODE = Pattern.compile("<!-- code: (\\S+)#(\\S+) -->");
    static final Pattern FRAGMENT = Pattern.compile("<!-- java: fragment(.*) -->");
    static final Pattern MEMBERS = Pattern.compile("<!-- java: members -->");
    static final Pattern TYPE = Pattern.compile("(?m)^(?:public\\s+)?(?:final\\s+)?(?:class|record|interface|enum)\\s+"
            + "(\\w+)");
    static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+);");
    /** What a fragment may use without importing it: the packages a reader of the documents has in scope. */
    static final String IMPORTS = String.join("\n", "import dev.kolo.runtime.*;", "import dev.kolo.runtime.train.*;",
            "import dev.kolo.elastic.*;", "import dev.kolo.elastic.data.*;", "import dev.kolo.checkpoint.*;",
            "import dev.kolo.djl.*;", "import java.util.*;", "import java.util.concurrent.*;", "import java.nio.file.*;",
            "import java.time.Duration;", "import dev.kolo.kernels.*;", "");

    @TempDir
    Path out;

    @Test
    void everyJavaBlockOfTheDocumentsCompiles() throws IOException {
        int checked = 0;
        List<String> failures = new ArrayList<>();
        for (Path doc : Documents.all()) {
            for (Documents.Block b : Documents.javaBlocks(doc)) {
                String problem = check(b);
                if (problem != null) {
                    failures.add(b.where() + ": " + problem);
                }
                checked++;
            }
        }
        assertTrue(checked >= 10, "the documents hold Java blocks (" + checked + " found)");
        if (!failures.isEmpty()) {
            fail(failures.size() + " Java block(s) of the documents do not compile:\n" + String.join("\n\n", failures));
        }
    }

    /** @return what is wrong with the block, or null */
    String check(Documents.Block b) throws IOException {
        String marker = b.marker() == null ? "" : b.marker();
        Matcher code = CODE.matcher(marker);
        if (code.find()) {
            List<String> region = region(Files.readAllLines(Documents.ROOT.resolve(code.group(1))), code.group(2),
                    code.group(1));
            return region.equals(b.lines()) ? null : "differs from " + code.group(1) + "#" + code.group(2)
                    + " (copy the region again): expected\n" + String.join("\n", region);
        }
        String body = String.join("\n", b.lines());
        Matcher fragment = FRAGMENT.matcher(marker);
        String name = "Block" + Math.abs((b.where()).hashCode());
        if (fragment.find()) {
            return compile(name, IMPORTS + "class " + name + " {\n    void block(" + fragment.group(1).trim()
                    + ") throws Exception {\n" + body + "\n    }\n}\n");
        }
        if (MEMBERS.matcher(marker).find()) {
            return compile(name, IMPORTS + "class " + name + " {\n" + body + "\n}\n");
        }
        Matcher type = TYPE.matcher(body);
        if (!type.find()) {
            return "neither a whole compilation unit nor marked: put <!-- java: fragment PARAMETERS --> (statements), "
                    + "<!-- java: members --> (declarations) or <!-- code: PATH#REGION --> (a copy) before it";
        }
        Matcher pkg = PACKAGE.matcher(body);
        return compile((pkg.find() ? pkg.group(1) + "." : "") + type.group(1), body);
    }

    /** Compiles one source in this JVM against the test class path; returns the diagnostics on failure. */
    String compile(String className, String source) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter diagnostics = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, Locale.ROOT, null)) {
            JavaFileObject unit = new SimpleJavaFileObject(URI.create("string:///" + className.replace('.', '/')
                    + ".java"), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return source;
                }
            };
            Path classes = Files.createTempDirectory(out, "classes");
            boolean ok = javac.getTask(diagnostics, files, null, List.of("-proc:none", "-d", classes.toString(),
                    "-cp", System.getProperty("java.class.path"), "-Xlint:none"), null, List.of(unit)).call();
            return ok ? null : diagnostics.toString();
        }
    }

    /** The lines between {@code // example:NAME} and the next {@code // example:end}, indentation removed. */
    static List<String> region(List<String> source, String name, String file) {
        int from = -1;
        for (int i = 0; i < source.size(); i++) {
            if (source.get(i).trim().equals("// example:" + name)) {
                from = i + 1;
            } else if (from >= 0 && source.get(i).trim().equals("// example:end")) {
                return Documents.dedent(source.subList(from, i));
            }
        }
        throw new AssertionError(file + " has no region '// example:" + name + "' ... '// example:end'");
    }

    @Test
    void aBlockThatDiffersFailsToCompileOrIsUnmarkedIsFound() throws IOException {
        List<String> doc = List.of("# A", "<!-- java: fragment Kolo kolo -->", "```java", "kolo.barrier();", "```",
                "", "<!-- java: fragment Kolo kolo -->", "```java", "kolo.barrierr();", "```",
                "```java", "x();", "```",
                "```java", "import dev.kolo.runtime.Kolo;", "class Whole {", "    Kolo k;", "}", "```",
                "<!-- java: members -->", "```java", "int twice(int x) {", "    return 2 * x;", "}", "```");
        List<Documents.Block> blocks = Documents.javaBlocks(Documents.ROOT.resolve("doc.md"), doc);
        assertEquals(5, blocks.size());
        assertEquals(null, check(blocks.get(0)), "a fragment in its wrapper compiles");
        assertTrue(check(blocks.get(1)).contains("barrierr"), "a renamed method is found");
        assertTrue(check(blocks.get(2)).contains("neither a whole compilation unit nor marked"));
        assertEquals(null, check(blocks.get(3)), "a whole compilation unit compiles as it is");
        assertEquals(null, check(blocks.get(4)), "members compile inside a class");
        List<String> source = List.of("class A {", "    // example:run", "    void run() {", "    }",
                "    // example:end", "}");
        assertEquals(List.of("void run() {", "}"), region(source, "run", "A.java"));
        assertThrows(AssertionError.class, () -> region(source, "missing", "A.java"));
    }
}
