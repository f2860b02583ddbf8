package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.jvm.JvmOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which command gets Kolo's JVM options on its command line, where, and which of them it has already. */
class ChildJvmOptionsTest {
    @Test
    void javaGetsEveryOptionRightAfterTheLauncher() {
        List<String> cmd = ChildJvmOptions.withOptions(List.of("/opt/jdk/bin/java", "-Xmx1g", "-cp", "a.jar", "my.Main",
                "--add-opens", "x"));
        List<String> expected = new ArrayList<>(List.of("/opt/jdk/bin/java"));
        expected.addAll(JvmOptions.all());
        expected.addAll(List.of("-Xmx1g", "-cp", "a.jar", "my.Main", "--add-opens", "x"));
        assertEquals(expected, cmd);
        assertEquals(JvmOptions.all().size() + 2, ChildJvmOptions.withOptions(List.of("java", "-version")).size(),
                "java found on PATH is java too");
    }

    @Test
    void anythingElseRunsAsGiven() {
        for (List<String> cmd : List.of(List.of("sh", "-c", "exec java -cp a.jar my.Main"), List.of("./train.sh"),
                List.of("/usr/bin/env", "java", "my.Main"), List.of("javac", "X.java"), List.of("java.sh"))) {
            assertFalse(ChildJvmOptions.runsJava(cmd), cmd.toString());
            assertEquals(cmd, ChildJvmOptions.withOptions(cmd));
        }
        assertTrue(ChildJvmOptions.runsJava(List.of("/usr/lib/jvm/temurin-25/bin/java")));
    }

    @Test
    void anOptionGivenInAnyFormIsNotGivenAgain() {
        List<String> all = JvmOptions.all();
        List<String> spelled = List.of("--add-modules", "java.se", "--add-exports",
                "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED,other",
                "--add-opens", "java.base/sun.nio.ch=other,ALL-UNNAMED", "--enable-native-access", "my.mod,ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=warn", "-cp", "--add-opens=not.an/option=ALL-UNNAMED", "my.Main");
        assertEquals(List.of("--add-opens=java.management/sun.management=ALL-UNNAMED",
                "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED"),
                ChildJvmOptions.missingFrom(spelled), "the class path's value is not an option; the rest is");
        assertEquals(List.of(), ChildJvmOptions.missingFrom(all));
        assertEquals(List.of("-Dsun.misc.unsafe.memory.access=allow"), ChildJvmOptions.missingFrom(
                all.subList(0, all.size() - 1)));
        assertEquals(List.of(), ChildJvmOptions.missingFrom(List.of(String.join(" ", all).replace(
                "-Dsun.misc.unsafe.memory.access=allow", "-Dsun.misc.unsafe.memory.access=deny").split(" "))),
                "the user's own choice of Unsafe access stands");
    }

    @Test
    void theProgramsArgumentsAreNotOptionsOfTheJvm() {
        List<String> all = JvmOptions.all();
        for (String program : List.of("my.Main", "-jar", "-m", "--module=a/b.C")) {
            List<String> cmd = new ArrayList<>(List.of(program, "x"));
            cmd.addAll(all);
            assertEquals(all, ChildJvmOptions.missingFrom(cmd), program);
        }
    }
}
