package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class SelectionTest {

    @Test
    void settingsChooseTheImplementation() {
        assertEquals("java", KernelSelector.select("java").name());
        assertEquals("java", KernelSelector.select(" JAVA ").name());
        assertEquals("java", Kernels.java().name());
        assertThrows(IllegalArgumentException.class, () -> KernelSelector.select("gpu"));
        if (NativeKernels.isAvailable()) {
            assertEquals("native", KernelSelector.select("native").name());
            assertEquals("native", KernelSelector.select(null).name());
            assertEquals("native", KernelSelector.select("auto").name());
        } else {
            assertThrows(IllegalStateException.class, () -> KernelSelector.select("native"));
            assertEquals("java", KernelSelector.select(null).name());
        }
        assertSame(Kernels.get(), Kernels.get());
    }

    @Test
    void configureSwitchesTheProcessKernels() {
        try {
            assertEquals("java", Kernels.configure("java", null).name());
            assertSame(Kernels.java(), Kernels.get());
            assertThrows(IllegalArgumentException.class, () -> Kernels.configure("gpu", null));
            assertSame(Kernels.java(), Kernels.get(), "a refused choice changes nothing");
            if (NativeKernels.isAvailable()) {
                String best = NativeKernels.setMaxIsa("avx512");
                assertEquals("native", Kernels.configure("native", "scalar").name());
                assertEquals("scalar", NativeKernels.isa());
                Kernels.configure("auto", null);
                assertEquals(best, NativeKernels.isa(), "no cap given: the best the CPU has again");
            }
        } finally {
            Kernels.configure("auto", null);
        }
    }

    @Test
    void nativeIsAvailableWhereItWasBuilt() {
        Impl.requireNative();
        assertTrue(List.of("scalar", "avx2", "avx512").contains(NativeKernels.isa()));
    }

    /** A JVM without JavaCPP on the class path cannot load the library: it falls back, or fails if native is forced. */
    @Test
    void fallsBackToJavaWhenTheLibraryCannotLoad() throws Exception {
        String cp = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("javacpp"))
                .collect(Collectors.joining(File.pathSeparator));

        Result auto = runProbe(cp, null);
        assertEquals(0, auto.exit, auto.output);
        assertTrue(auto.output.contains("selected java"), auto.output);
        assertTrue(auto.output.contains("WARN") && auto.output.contains("native library unavailable"), auto.output);

        Result forced = runProbe(cp, "native");
        assertEquals(3, forced.exit, forced.output);
        assertTrue(forced.output.contains("error KOLO_KERNELS=native but the native kernels cannot load"), forced.output);
        assertTrue(forced.output.contains("NoClassDefFoundError"), forced.output);
    }

    private static final class Result {
        final int exit;
        final String output;

        Result(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }
    }

    private static Result runProbe(String classPath, String koloKernels) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xshare:auto");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(SelectionProbe.class.getName());
        if (koloKernels != null) {
            cmd.add(koloKernels);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Path log = Files.createTempFile("kolo-probe", ".log");
        try {
            Process p = pb.redirectOutput(log.toFile()).start();
            int exit = p.waitFor();
            return new Result(exit, Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
