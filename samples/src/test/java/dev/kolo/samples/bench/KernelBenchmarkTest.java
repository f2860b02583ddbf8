package dev.kolo.samples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.kernels.NativeKernels;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Output format only (tiny sizes, milliseconds per case); the figures come from a real run. */
class KernelBenchmarkTest {

    private static final Pattern LINE = Pattern.compile(
            "\\{\"bench\":\"kernels\",\"impl\":\"(native|java|copy)\",\"op\":\"(sum|convert|copy)\","
            + "\"dtype\":\"(float32|float16|bfloat16|uint8)\",\"bytes\":(4096|8192),\"GBps\":[0-9]+\\.[0-9]{3}\\}");

    @Test
    void jsonIsOneObjectPerLine() {
        String[] lines = run(true).split("\n");
        int impls = NativeKernels.isAvailable() ? 2 : 1;
        assertEquals(2 * (1 + 3 * impls + 2 * impls), lines.length);
        for (String line : lines) {
            assertTrue(LINE.matcher(line).matches(), line);
        }
    }

    @Test
    void tableHasRatios() {
        String table = run(false);
        assertTrue(table.contains("native/copy") && table.contains("java/native"), table);
        assertTrue(table.matches("(?s).*\\nsum +float32 +4 KiB .*"), table);
    }

    private static String run(boolean json) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        KernelBenchmark.run(new PrintStream(bytes, true, StandardCharsets.UTF_8), json, new int[] {4096, 8192}, 2_000_000L);
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
