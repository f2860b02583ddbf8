package dev.kolo.samples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the benchmark small, to check its output format (the figures are not asserted: this is not a
 * timed test). The real run (256 MiB): {@code java -jar worker.jar bench checkpoint --json DIR}.
 */
class CheckpointBenchmarkTest {
    private static final Pattern CASE = Pattern.compile(
            "\\{\"bench\":\"checkpoint\",\"case\":\"([a-z_]+)\",\"bytes\":([0-9]+),\"seconds\":([0-9]+\\.[0-9]{6}),"
            + "\"GBps\":[0-9]+\\.[0-9]{3}\\}");
    private static final Pattern RATIO = Pattern.compile(
            "\\{\"bench\":\"checkpoint\",\"ratio\":\"([a-z_]+)\",\"value\":([0-9]+\\.[0-9]{4})\\}");

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void printsOneJsonLinePerCaseAndRatio() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            CheckpointBenchmark.run(out, true, tmp, 4 << 20, 1);
        }
        Set<String> cases = new TreeSet<>();
        Set<String> ratios = new TreeSet<>();
        for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
            Matcher c = CASE.matcher(line);
            Matcher r = RATIO.matcher(line);
            if (c.matches()) {
                cases.add(c.group(1));
                assertEquals(4L << 20, Long.parseLong(c.group(2)), line);
                assertTrue(Double.parseDouble(c.group(3)) > 0, line);
            } else {
                assertTrue(r.matches(), "neither a case nor a ratio line: " + line);
                ratios.add(r.group(1));
                assertTrue(Double.parseDouble(r.group(2)) > 0, line);
            }
        }
        assertTrue(cases.containsAll(List.of("save_blocking", "save_sync", "save_async_total", "plain_write", "restore",
                "plain_read")), cases.toString());
        assertTrue(ratios.containsAll(List.of("blocking_vs_sync", "write_vs_plain", "restore_vs_plain")), ratios.toString());
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(0, left.count(), "the benchmark cleans up after itself");
        }
    }
}
