package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged program as a user runs it, {@code java -jar target/spark-example.jar --master spark://... -np N}, on
 * a standalone cluster of separate JVMs (a master, two workers of one core, their executors), with the defaults.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class SparkExampleIT {
    private static final Pattern DONE = Pattern.compile(
            "kolo: done rank=(\\d+) size=2 epochs=1 test_accuracy=([0-9.]+) checksum=([0-9a-f]{16})");
    @TempDir
    static Path dir;
    static StandaloneCluster cluster;

    @BeforeAll
    static void startCluster() throws IOException {
        cluster = new StandaloneCluster(dir, Path.of("target/lib"), 2);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void trainsFromTheTableWithEachRankInItsOwnExecutorAndPrintsEveryRanksSummary() throws Exception {
        Run run = run("-np", "2", "--epochs", "1");
        assertEquals(0, run.exit, run.output);
        List<String[]> done = new ArrayList<>();
        Matcher m = DONE.matcher(run.output);
        while (m.find()) {
            done.add(new String[] {m.group(1), m.group(2), m.group(3)});
        }
        assertEquals(2, done.size(), run.output);
        assertEquals("0", done.get(0)[0]);
        assertEquals("1", done.get(1)[0]);
        assertEquals(done.get(0)[2], done.get(1)[2], "ranks end with equal parameters");
        assertTrue(Double.parseDouble(done.get(0)[1]) > 0.80, "learned: " + done.get(0)[1]);
        assertTrue(run.output.contains("spark: wrote Fashion-MNIST to "), run.output);
        assertTrue(run.output.contains("epoch 1 done: test_accuracy="), "rank 0's log reaches the driver");
        assertTrue(run.output.contains("train: 60000 examples, 30000 per rank"), run.output);
        try (var work = Files.walk(dir)) {
            long executorsThatTrained = work.filter(p -> p.getFileName().toString().equals("stdout"))
                    .filter(p -> read(p).contains("kolo: step=")).count();
            assertEquals(2, executorsThatTrained, "each rank in an executor JVM of its own");
        }
    }

    @Test
    void moreRanksThanTheClusterHasSlotsFailsSayingSo() throws Exception {
        Run run = run("-np", "3", "--epochs", "1");
        assertNotEquals(0, run.exit);
        assertTrue(run.output.contains("needs 3 task slots") && run.output.contains("has 2"), run.output);
    }

    private record Run(int exit, String output) {
    }

    private static Run run(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("java", "-jar", "target/spark-example.jar", "--master",
                cluster.url(), "--table", dir.resolve("table").toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "run", ".log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the program did not end within 300 s:\n" + Files.readString(out));
        }
        return new Run(p.exitValue(), Files.readString(out));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }
}
