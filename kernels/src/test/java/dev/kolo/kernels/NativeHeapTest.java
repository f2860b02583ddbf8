package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With the heap kept, an engine-like churn of large blocks (ten 3 MiB blocks allocated, written and freed per
 * round) faults its pages in once, not every round: in a process of its own ({@link HeapChurn}), against the
 * same churn with glibc's defaults.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativeHeapTest {
    /** Pages of one round: what the defaults fault in again each round. */
    static final long PAGES_PER_ROUND = 10L * HeapChurn.BLOCK / 4096;

    @Test
    void largeBlocksStayInTheHeapAcrossRounds() throws Exception {
        List<String> defaults = run();
        List<String> tuned = run("tuned");
        assertTrue(tuned.contains("outcome SET"), "the thresholds were set: " + tuned);
        long before = faults(defaults);
        long after = faults(tuned);
        // 19 rounds: the defaults trim the heap after each and fault every page in again.
        assertTrue(before > 10 * PAGES_PER_ROUND, "the churn faults with glibc's defaults: " + before + " faults");
        assertTrue(after < PAGES_PER_ROUND, "with the heap kept, 19 rounds fault less than one round's pages: "
                + after + " faults (defaults: " + before + ")");
    }

    static long faults(List<String> lines) {
        return lines.stream().filter(l -> l.startsWith("faults ")).mapToLong(l -> Long.parseLong(l.substring(7)))
                .findFirst().orElseThrow(() -> new AssertionError("no faults line: " + lines));
    }

    static List<String> run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HeapChurn.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("MALLOC_MMAP_THRESHOLD_");
        pb.environment().remove("MALLOC_TRIM_THRESHOLD_");
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                lines.add(l);
            }
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the churn ended");
        assertEquals(0, p.exitValue(), String.join("\n", lines));
        return lines;
    }
}
