package dev.kolo.samples.bench.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code bench model} prints its three sections, as tables and as JSON lines. */
class BenchModelCommandTest {
    @TempDir
    Path dir;

    private static String run(String... args) {
        StringWriter text = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new CommandLine(new BenchModelCommand()).setOut(new PrintWriter(text))
                .setErr(new PrintWriter(err)).execute(args);
        assertEquals(0, status, err.toString());
        return text.toString();
    }

    /** bench allreduce --json lines of a machine the model describes exactly. */
    private Path measured() throws Exception {
        CostModel machine = new CostModel(40e-6, 1 / 1.5e9, 1 / 21.5e9, 80e-6, 20e-6, 2,
                CostModel.Agreement.RECURSIVE_DOUBLING);
        List<String> lines = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (long b = 4; b <= 64L << 20; b *= 4) {
                lines.add(String.format(Locale.ROOT, "{\"bench\":\"allreduce\",\"dtype\":\"float32\",\"np\":%d,"
                        + "\"bytes\":%d,\"time_us\":%.2f,\"algbw_GBps\":0.1,\"busbw_GBps\":0.1,\"b2b_us\":1.0}", n, b,
                        machine.cachedAllreduceSeconds(n, b) * 1e6));
            }
        }
        Path f = dir.resolve("kolo.jsonl");
        Files.write(f, lines);
        return f;
    }

    @Test
    void printsTheThreeSections() throws Exception {
        String out = run("--np", "2,8,64", "--cores", "2", "--measured", measured().toString());
        assertTrue(out.contains("(a) allreduce by size"), out);
        assertTrue(out.contains("(b) cached ResNet-50 step"), out);
        assertTrue(out.contains("(c) model against measured"), out);
        assertTrue(out.contains("within +-30%: 39 of 39 points (100%)"), out);
        // 3 np x 13 sizes (4 B to 64 MiB by factors of 4) in (a).
        assertEquals(3 * 13, out.lines().filter(l -> l.matches("\\|\\s+\\d+ \\|\\s+\\d+ \\|\\s+[A-Z_|]+ \\|.*"))
                .count() - 39, out);
    }

    @Test
    void withoutMeasurementsSectionCSaysSo() {
        String out = run("--np", "1024");
        assertTrue(out.contains("(c) model against measured: no --measured FILE given"), out);
        assertTrue(out.contains("|  1024 |"), out);
    }

    @Test
    void jsonLinesOnly() throws Exception {
        String out = run("--json", "--np", "4", "--cores", "2", "--measured", measured().toString());
        List<String> lines = out.lines().toList();
        assertTrue(lines.stream().allMatch(l -> l.startsWith("{\"bench\":\"model\",\"section\":\"")), out);
        assertEquals(13, lines.stream().filter(l -> l.contains("\"section\":\"allreduce\"")).count());
        assertEquals(1, lines.stream().filter(l -> l.contains("\"section\":\"resnet50_step\"")).count());
        assertEquals(1, lines.stream().filter(l -> l.contains("\"share_within_30pct\":1.000")).count(), out);
        assertEquals(39, lines.stream().filter(l -> l.contains("\"section\":\"measured\"")).count());
    }

    @Test
    void aMissingMeasuredFileIsAnErrorThatNamesIt() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchModelCommand()).setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(err));
        cli.setExecutionExceptionHandler((e, c, p) -> {
            c.getErr().println(e.getMessage());
            return 78;
        });
        assertEquals(78, cli.execute("--measured", dir.resolve("absent.jsonl").toString()));
        assertTrue(err.toString().contains("--measured " + dir.resolve("absent.jsonl")), err.toString());
    }
}
