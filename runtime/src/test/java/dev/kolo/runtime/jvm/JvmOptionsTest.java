package dev.kolo.runtime.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.testing.ChildJvms;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link JvmOptions}: the build's test JVMs have all of them (so a missing one shows here), and a worker started
 * by hand without them says in one line of Kolo's what is missing and how to give it, while Hazelcast's own
 * warning about the same does not appear.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JvmOptionsTest {
    /** Kolo's line: {@code Preflight}'s message begins so. */
    static final String KOLO_LINE = "this JVM lacks options Kolo asks for";
    /** Hazelcast 5.6's warning. */
    static final String HAZELCAST_LINE = "without proper access to required Java packages";

    @Test
    void theTestJvmHasEveryOption() {
        // The surefire argLine is the root pom's kolo.jvm.opens, held equal to all() by JvmOptionsDeclarationTest.
        assertEquals(List.of(), JvmOptions.missing(com.hazelcast.core.Hazelcast.class.getModule()));
    }

    @Test
    void everyOptionIsOneWordThatNamesWhatItGrants() {
        for (String option : JvmOptions.all()) {
            assertTrue(option.matches("--[a-z-]+=[A-Za-z./=-]+|-D[a-z.]+=[a-z]+"), option);
        }
        assertTrue(JvmOptions.all().contains("--add-opens=java.base/java.lang=ALL-UNNAMED"), JvmOptions.all().toString());
        assertEquals("java.base/jdk.internal.ref", JvmOptions.manifestAddExports());
    }

    @Test
    void startedByHandWithoutThemKoloSaysWhatIsMissingOnceAndHazelcastDoesNotRepeatIt() throws Exception {
        List<String> out = runWorkerTwice(List.of("-Xmx256m"));
        List<String> kolo = out.stream().filter(l -> l.contains(KOLO_LINE)).toList();
        assertEquals(1, kolo.size(), "one line for the process's two workers:\n" + String.join("\n", out));
        String line = kolo.get(0);
        assertTrue(line.contains(" WARN "), line);
        List<String> expected = new ArrayList<>(List.of("--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
                "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens=java.management/sun.management=ALL-UNNAMED",
                "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 24) {
            expected.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-Dsun.misc.unsafe.memory.access=allow"));
        }
        assertTrue(line.contains(KOLO_LINE + ": " + String.join(" ", expected) + " ("), line);
        for (String fix : List.of("worker.jar launch", "'Add-Opens: " + JvmOptions.manifestAddOpens() + "'",
                "'Add-Exports: java.base/jdk.internal.ref'", "'Enable-Native-Access: ALL-UNNAMED'", "JDK_JAVA_OPTIONS")) {
            assertTrue(line.contains(fix), "names the fix " + fix + ": " + line);
        }
        assertEquals(List.of(), out.stream().filter(l -> l.contains(HAZELCAST_LINE)).toList(), String.join("\n", out));
    }

    @Test
    void startedWithThemNeitherSaysAnything() throws Exception {
        List<String> out = runWorkerTwice(JvmOptions.all());
        assertEquals(List.of(), out.stream().filter(l -> l.contains(KOLO_LINE) || l.contains(HAZELCAST_LINE)
                || l.startsWith("WARNING:")).toList(), String.join("\n", out));
    }

    /** Runs {@link Worker} (two workers in turn, each a job of one) in a JVM of its own with {@code flags}. */
    private static List<String> runWorkerTwice(List<String> flags) throws Exception {
        Map<String, String> env = new HashMap<>();
        System.getenv().keySet().stream().filter(k -> k.startsWith("KOLO_")).forEach(k -> env.put(k, null));
        env.put("KOLO_METRICS_PORT", "0");
        env.put("JDK_JAVA_OPTIONS", null);
        try (ChildJvms jvms = new ChildJvms()) {
            int p = jvms.start(Worker.class, flags, env);
            int exit = jvms.waitExit(p, 90);
            List<String> out = jvms.output(p);
            assertEquals(0, exit, String.join("\n", out));
            assertEquals(2, out.stream().filter(l -> l.contains("sum=1.0")).count(), String.join("\n", out));
            return out;
        }
    }

    /** A program that starts a worker by hand (no launcher), twice, with whatever flags its JVM was given. */
    public static final class Worker {
        public static void main(String[] args) {
            for (int i = 0; i < 2; i++) {
                try (Kolo kolo = Kolo.init()) {
                    System.out.println("sum=" + kolo.allreduce("s", Tensor.of(new float[] {1}), ReduceOp.SUM)
                            .toFloatArray()[0]);
                }
            }
        }
    }
}
