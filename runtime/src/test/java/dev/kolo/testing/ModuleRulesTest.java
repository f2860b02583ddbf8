package dev.kolo.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each rule of {@link ModuleRules} fails on a tree that breaks it, and passes on one just within it. */
class ModuleRulesTest {
    @TempDir
    Path dir;

    @Test
    void aClassAboveTheLimitFails() throws IOException {
        write("a/Long.java", "package a;\n" + "//\n".repeat(500));
        write("a/Short.java", "package a;\n" + "//\n".repeat(499));
        assertEquals(List.of("a/Long.java has 501 lines"), ModuleRules.classesOver(dir, 500));
    }

    @Test
    void aPackageAboveTheLimitFailsUnlessExempt() throws IOException {
        for (int i = 0; i < 21; i++) {
            write("a/C" + i + ".java", "package a;\n");
            write("b/C" + i + ".java", "package b;\n");
        }
        for (int i = 0; i < 20; i++) {
            write("c/C" + i + ".java", "package c;\n");
        }
        write("c/package-info.java", "package c;\n");
        assertEquals(List.of("a has 21 files", "b has 21 files"), ModuleRules.packagesOver(dir, 20, Set.of()));
        assertEquals(List.of("b has 21 files"), ModuleRules.packagesOver(dir, 20, Set.of("a")));
    }

    @Test
    void anImportCircleFailsEvenThroughAJavadocImport() throws IOException {
        write("m/a/A.java", "package m.a;\nimport m.b.B;\n/** {@link B} */\nclass A {}\n");
        write("m/b/B.java", "package m.b;\nimport m.c.C;\nclass B { C c; }\n");
        write("m/c/C.java", "package m.c;\nimport m.a.A;\n/** {@link A} */\nclass C {}\n");
        write("m/d/D.java", "package m.d;\nimport m.a.A;\nclass D {}\n");
        List<String> circles = ModuleRules.importCircles(dir, List.of(), null);
        assertEquals(1, circles.size(), circles.toString());
        assertTrue(circles.get(0).startsWith("circle [m.a, m.b, m.c]:"), circles.get(0));
        assertTrue(circles.get(0).contains("m.c -> m.a (m/c/C.java imports m.a.A)"), circles.get(0));
    }

    @Test
    void theApiPackageIsNoNodeOfACircle() throws IOException {
        write("m/M.java", "package m;\nimport m.a.A;\npublic class M { A a; }\n");
        write("m/a/A.java", "package m.a;\nimport m.M;\npublic class A { M m; }\n");
        assertEquals(1, ModuleRules.importCircles(dir, List.of(), null).size());
        assertEquals(List.of(), ModuleRules.importCircles(dir, List.of(), "m"));
    }

    @Test
    void aClassThatRefersToItsCreatorFails() {
        JavaClasses classes = new ClassFileImporter().importClasses(Creator.class, Created.class, Handed.class,
                Facts.class);
        assertEquals(List.of(Created.class.getName() + " refers to " + Creator.class.getName() + ", which creates it"),
                ModuleRules.creatorReferences(classes));
    }

    @Test
    void aSeedDirectoryOfNoFuzzTestFails() throws IOException {
        Path resources = dir.resolve("resources");
        Path tests = dir.resolve("java");
        Files.createDirectories(resources.resolve("x/old/ReadFuzzTestInputs/read"));
        Files.createDirectories(resources.resolve("x/ReadFuzzTestInputs/read"));
        Files.createDirectories(resources.resolve("x/ReadFuzzTestInputs/parse"));
        Files.createDirectories(tests.resolve("x"));
        Files.writeString(tests.resolve("x/ReadFuzzTest.java"),
                "package x;\nclass ReadFuzzTest {\n    @FuzzTest(maxDuration = \"1s\")\n    void read(byte[] in) {}\n}\n");
        List<String> unmatched = ModuleRules.unmatchedFuzzSeeds(resources, tests);
        assertEquals(2, unmatched.size(), unmatched.toString());
        assertTrue(unmatched.get(0).startsWith("x/ReadFuzzTestInputs/parse: no @FuzzTest method parse"), unmatched.get(0));
        assertTrue(unmatched.get(1).startsWith("x/old/ReadFuzzTestInputs/read: no @FuzzTest method read"),
                unmatched.get(1));
    }

    private void write(String path, String text) throws IOException {
        Path f = dir.resolve(path);
        Files.createDirectories(f.getParent());
        Files.writeString(f, text);
    }
}

/** Creates both: {@link Created} refers back to it, {@link Handed} sees only the facts it is handed. */
final class Creator {
    final Created created = new Created(this);
    final Handed handed = new Handed(new Facts(1));
}

final class Created {
    final Creator creator;

    Created(Creator creator) {
        this.creator = creator;
    }
}

final class Handed {
    final Facts facts;

    Handed(Facts facts) {
        this.facts = facts;
    }
}

record Facts(int size) {
}
