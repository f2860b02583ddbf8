package dev.kolo.samples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * A training program of a user's own, not part of worker.jar: its source is written and compiled by the test,
 * against worker.jar as its only library. {@code app.Train sum} adds the ranks and prints one result line;
 * {@code app.Train steps} allreduces every 100 ms until stopped, printing each step, and after an error (a lost
 * worker) hangs instead of exiting: only its launcher can end it.
 */
final class OwnProgram {
    static final String MAIN = "app.Train";

    private static final String SOURCE = """
            package app;

            import dev.kolo.runtime.Kolo;
            import dev.kolo.runtime.ReduceOp;
            import dev.kolo.runtime.Tensor;
            import java.nio.file.DirectoryStream;
            import java.nio.file.Files;
            import java.nio.file.Path;

            public class Train {
                public static void main(String[] args) throws Exception {
                    try (Kolo kolo = Kolo.init()) {
                        int rank = kolo.rank();
                        int size = kolo.size();
                        if (args.length > 0 && args[0].equals("steps")) {
                            try {
                                for (int step = 0; ; step++) {
                                    float v = kolo.allreduce("step", Tensor.of(new float[] {1}), ReduceOp.SUM)
                                            .toFloatArray()[0];
                                    System.out.println("step " + step + " rank=" + rank + " value=" + (long) v);
                                    Thread.sleep(100);
                                }
                            } catch (RuntimeException e) {
                                // A program that does not end by itself: only its launcher can stop it.
                                System.out.println("stuck after: " + e.getMessage());
                                Thread.sleep(Long.MAX_VALUE);
                            }
                        }
                        float sum = kolo.allreduce("sum", Tensor.of(new float[] {rank + 1}), ReduceOp.SUM)
                                .toFloatArray()[0];
                        kolo.barrier();
                        String secret = System.getenv("KOLO_JOB_SECRET");
                        boolean onCommandLine = false;
                        if (secret != null && !secret.isEmpty()) {
                            try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
                                for (Path p : procs) {
                                    try {
                                        String cmd = new String(Files.readAllBytes(p.resolve("cmdline")));
                                        onCommandLine |= cmd.contains(secret);
                                    } catch (Exception gone) {
                                        // the process ended while being read
                                    }
                                }
                            }
                        }
                        System.out.println("result rank=" + rank + " size=" + size + " sum=" + (long) sum
                                + " secret=" + (secret != null && !secret.isEmpty())
                                + " secret_on_command_line=" + onCommandLine + " host=" + System.getenv("KOLO_HOST"));
                    }
                }
            }
            """;

    private OwnProgram() {
    }

    /** @return the directory of the compiled program's classes */
    static Path compile(Path dir) throws IOException {
        Path src = dir.resolve("src/app/Train.java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, SOURCE);
        Path classes = dir.resolve("classes");
        Files.createDirectories(classes);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, "-d", classes.toString(), "-cp",
                WorkerProcess.workerJar().toAbsolutePath().toString(), src.toString());
        if (status != 0) {
            throw new AssertionError("the test program does not compile:\n" + errors.toString(StandardCharsets.UTF_8));
        }
        return classes;
    }

    /**
     * @param java the {@code java} launcher to run it with
     * @return the command that runs the program with no JVM option at all: java, the class path, the main class
     */
    static List<String> bareCommand(String java, Path classes, String... args) {
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", classes.toAbsolutePath() + ":"
                + WorkerProcess.workerJar().toAbsolutePath(), MAIN));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** @return the command that runs the program: java, its classes and worker.jar as the library */
    static List<String> command(Path classes, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:+UseSerialGC", "-cp", classes.toAbsolutePath() + ":"
                + WorkerProcess.workerJar().toAbsolutePath(), MAIN));
        cmd.addAll(List.of(args));
        return cmd;
    }
}
