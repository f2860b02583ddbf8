package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.jvm.JvmOptions;
import dev.kolo.testing.ChildJvms;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code worker.jar launch -- COMMAND}: a program of the user's own, compiled by the test, as every worker. The
 * program is written with no JVM option: the launcher gives it Kolo's, and nothing in its output warns about
 * module access, Unsafe or native access.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OwnProgramLaunchIT {
    @TempDir
    static Path tmp;
    static Path classes;

    @BeforeAll
    static void compile() throws Exception {
        classes = OwnProgram.compile(tmp);
    }

    @Test
    void threeRanksOfAProgramOfItsOwnEachGetTheirResult() throws Exception {
        Path logs = tmp.resolve("logs");
        List<String> args = new ArrayList<>(List.of("launch", "-np", "3", "--output-ranks", "0", "--log-dir",
                logs.toString(), "--"));
        args.addAll(OwnProgram.command(classes, "sum"));
        try (WorkerProcess launch = WorkerProcess.start(args.toArray(new String[0]))) {
            assertEquals(0, launch.exitCode(120), launch.transcript());
            assertEquals(List.of("[0] result rank=0 size=3 sum=6 secret=true secret_on_command_line=false host=null"),
                    launch.lines(l -> l.contains("result rank=")), launch.transcript());
            assertTrue(launch.lines(l -> l.startsWith("[1]") || l.startsWith("[2]")).isEmpty(),
                    "--output-ranks 0 shows rank 0 only\n" + launch.transcript());
            for (int r = 0; r < 3; r++) {
                List<String> log = Files.readAllLines(logs.resolve("rank." + r + ".log"));
                assertTrue(log.contains("result rank=" + r + " size=3 sum=6 secret=true secret_on_command_line=false host=null"),
                        "rank " + r + "'s log: " + log);
            }
        }
    }

    /** Two launches at once on one machine, default settings: their workers' metrics ports do not collide. */
    @Test
    void twoLaunchesAtOnceWithDefaultsBothSucceed() throws Exception {
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--"));
        args.addAll(OwnProgram.command(classes, "sum"));
        try (WorkerProcess first = WorkerProcess.start(args.toArray(new String[0]));
             WorkerProcess second = WorkerProcess.start(args.toArray(new String[0]))) {
            assertEquals(0, first.exitCode(120), first.transcript());
            assertEquals(0, second.exitCode(120), second.transcript());
            assertEquals(2, first.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    first.transcript());
            assertEquals(2, second.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    second.transcript());
        }
    }

    /** What the JVM, Hazelcast or Kolo say when options are missing (a launcher's "Picked up" note aside). */
    static final Pattern ACCESS_WARNING = Pattern.compile("(?i).*(illegal reflective|illegal access|without proper "
            + "access|add-opens|add-exports|enable-native-access|sun\\.misc\\.Unsafe|restricted method|lacks options).*");

    static List<String> accessWarnings(List<String> lines) {
        return lines.stream().filter(l -> ACCESS_WARNING.matcher(l).matches() && !l.contains("Picked up ")).toList();
    }

    /** {@code launch -np 2 -- java -cp CP app.Train}: the user wrote no JVM option, and none is missed. */
    @Test
    void aProgramWrittenWithNoJvmOptionsRunsWithoutAWarning() throws Exception {
        launchBare(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * The same with a {@code java} of the other side of JDK 24 than the launcher's (the launcher does not know the
     * program's java, so the options must suit every JDK): on JDK 24+ it would warn about Unsafe and native access.
     */
    @Test
    void aProgramOnAnotherJdkRunsWithoutAWarning() throws Exception {
        Optional<String> other = otherJava();
        Assumptions.assumeTrue(other.isPresent(), "no JDK on the other side of 24 in /usr/lib/jvm");
        launchBare(other.get());
    }

    private static void launchBare(String java) throws Exception {
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--"));
        args.addAll(OwnProgram.bareCommand(java, classes, "sum"));
        try (WorkerProcess launch = WorkerProcess.start(args.toArray(new String[0]))) {
            assertEquals(0, launch.exitCode(120), launch.transcript());
            assertEquals(2, launch.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    launch.transcript());
            assertEquals(List.of(), accessWarnings(launch.out), java + "\n" + launch.transcript());
            assertEquals(List.of(), accessWarnings(launch.err), java + "\n" + launch.transcript());
        }
    }

    /**
     * {@code launch -- sh -c 'exec java ...'}: a script that runs java gets the options through JDK_JAVA_OPTIONS,
     * after what the variable held; JAVA_TOOL_OPTIONS (the image sets it) is left as it was.
     */
    @Test
    void aScriptThatRunsJavaGetsTheOptionsThroughJdkJavaOptions() throws Exception {
        List<String> java = OwnProgram.bareCommand(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), classes, "sum");
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--", "sh", "-c", "exec \"$@\"", "sh"));
        args.addAll(java);
        Map<String, String> env = Map.of("JDK_JAVA_OPTIONS", "-Dkolo.test.kept=1", "JAVA_TOOL_OPTIONS",
                "-Dkolo.test.tool=1");
        try (WorkerProcess launch = WorkerProcess.start(env, args.toArray(new String[0]))) {
            assertEquals(0, launch.exitCode(120), launch.transcript());
            assertEquals(2, launch.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    launch.transcript());
            for (int r = 0; r < 2; r++) {
                String rank = "[" + r + "] ";
                assertEquals(List.of(rank + "NOTE: Picked up JDK_JAVA_OPTIONS: -Dkolo.test.kept=1 "
                        + String.join(" ", JvmOptions.all())), launch.lines(l -> l.startsWith(rank + "NOTE: ")),
                        launch.transcript());
                assertEquals(1, launch.lines(l -> l.equals(rank + "Picked up JAVA_TOOL_OPTIONS: -Dkolo.test.tool=1"))
                        .size(), launch.transcript());
            }
            assertEquals(List.of(), accessWarnings(launch.out), launch.transcript());
        }
    }

    /** A JDK in /usr/lib/jvm on the other side of 24 than this JVM's, if there is one. */
    static Optional<String> otherJava() throws IOException {
        boolean warns = Runtime.version().feature() >= 24;
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            for (Path home : homes.sorted().toList()) {
                Path release = home.resolve("release");
                Path java = home.resolve("bin/java");
                if (Files.isRegularFile(release) && Files.isExecutable(java)) {
                    var m = Pattern.compile("JAVA_VERSION=\"(\\d+)").matcher(Files.readString(release));
                    if (m.find() && (Integer.parseInt(m.group(1)) >= 24) != warns) {
                        return Optional.of(java.toString());
                    }
                }
            }
        }
        return Optional.empty();
    }

    @Test
    void startedAloneItIsAJobOfOneAndSaysSoOnce() throws Exception {
        Map<String, String> withoutKoloVariables = new HashMap<>(); // null: removed
        System.getenv().keySet().stream().filter(k -> k.startsWith("KOLO_"))
                .forEach(k -> withoutKoloVariables.put(k, null));
        try (ChildJvms jvms = new ChildJvms()) {
            int p = jvms.start(OwnProgram.command(classes, "sum"), withoutKoloVariables);
            jvms.process(p).getOutputStream().close();
            int exit = jvms.waitExit(p, 60);
            String out = String.join("\n", jvms.output(p));
            assertEquals(0, exit, out);
            assertTrue(out.contains("result rank=0 size=1 sum=1 secret=false"), out);
            assertEquals(1, out.lines().filter(l -> l.contains("this process is a job of one worker")).count(), out);
            // Started by hand without options: Kolo says what is missing in one line, Hazelcast does not repeat it.
            List<String> said = accessWarnings(out.lines().toList());
            assertEquals(1, said.size(), out);
            assertTrue(said.get(0).contains(" WARN ") && said.get(0).contains("--add-opens=java.base/java.lang="
                    + "ALL-UNNAMED") && said.get(0).contains("worker.jar launch") && said.get(0).contains(
                    "Add-Opens: "), said.get(0));
        }
    }

    @Test
    void noWorkerOutlivesAKilledLauncher() throws Exception {
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--"));
        args.addAll(OwnProgram.command(classes, "steps"));
        try (WorkerProcess launch = WorkerProcess.start(args.toArray(new String[0]))) {
            launch.awaitLine(l -> l.startsWith("[1] step 3 "), 90);
            List<Long> pids = new ArrayList<>();
            for (String l : launch.lines(l -> l.contains("started worker"))) {
                pids.add(Long.parseLong(l.replaceAll(".*\\(pid (\\d+)\\).*", "$1")));
            }
            assertEquals(2, pids.size(), launch.transcript());
            for (long pid : pids) {
                assertTrue(ProcessHandle.of(pid).map(h -> h.info().command().orElse("").endsWith("java"))
                        .orElse(false), "the pid reported is the worker's own (" + pid + ")");
            }
            launch.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: no shutdown hook runs
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && pids.stream().anyMatch(OwnProgramLaunchIT::alive)) {
                Thread.sleep(100);
            }
            List<Long> left = pids.stream().filter(OwnProgramLaunchIT::alive).toList();
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            assertEquals(List.of(), left, "workers left running after their launcher was killed");
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
}
