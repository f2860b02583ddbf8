package dev.kolo.checkpoint.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.internal.format.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the benchmark small, to check its output format (the figures are not asserted: this is not a
 * timed test). The real run (256 MiB):
 * {@code java -cp ... dev.kolo.checkpoint.internal.bench.CheckpointBenchmark --json DIR}.
 */
class CheckpointBenchmarkTest {
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
            Map<String, Object> o = Json.object(Json.parse(line), "line");
            assertEquals("checkpoint", o.get("bench"));
            if (o.containsKey("case")) {
                cases.add((String) o.get("case"));
                assertEquals(4L << 20, ((Json.Num) o.get("bytes")).longValue());
                assertTrue(((Json.Num) o.get("seconds")).doubleValue() > 0, line);
                assertTrue(o.containsKey("GBps"), line);
            } else {
                ratios.add((String) o.get("ratio"));
                assertTrue(((Json.Num) o.get("value")).doubleValue() > 0, line);
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
