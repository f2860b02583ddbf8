package dev.kolo.samples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code java -jar worker.jar ...} as a child process whose output lines are collected as they come. Public for
 * the tests of other packages that drive the jar too (the chaos package's PodRestartIT).
 */
public final class WorkerProcess implements AutoCloseable {
    public final Process process;
    public final List<String> out = Collections.synchronizedList(new ArrayList<>());
    public final List<String> err = Collections.synchronizedList(new ArrayList<>());

    private final Thread outReader;
    private final Thread errReader;

    private WorkerProcess(Process process) {
        this.process = process;
        this.outReader = collect(process.getInputStream(), out);
        this.errReader = collect(process.getErrorStream(), err);
    }

    static Path workerJar() {
        Path jar = Paths.get(System.getProperty("kolo.workerJar", "target/worker.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: run 'mvn verify' (it builds worker.jar first)");
        }
        return jar;
    }

    static WorkerProcess start(String... args) throws IOException {
        return start(java.util.Map.of(), args);
    }

    /** As {@link #start(String...)} with {@code env} added to the environment. */
    static WorkerProcess start(java.util.Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx512m", "-jar", workerJar().toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        return new WorkerProcess(pb.start());
    }

    /** As {@link #start(java.util.Map, String...)} with {@code jvmFlags} before {@code -jar}. */
    static WorkerProcess start(List<String> jvmFlags, java.util.Map<String, String> env, String... args)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx512m"));
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-jar", workerJar().toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_"));
        pb.environment().putAll(env);
        return new WorkerProcess(pb.start());
    }

    /**
     * {@code java -jar worker.jar args} behind a command prefix (e.g. {@code ip netns exec NS}), with the test's
     * own KOLO_* variables removed and {@code env} added.
     */
    public static WorkerProcess start(List<String> prefix, Map<String, String> env, List<String> args)
            throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-XX:+UseSerialGC", "-jar", workerJar().toAbsolutePath().toString()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_"));
        pb.environment().putAll(env);
        return new WorkerProcess(pb.start());
    }

    /** Waits for exit, killing the process if it outlives {@code seconds}. */
    public int exitCode(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            throw new AssertionError("worker.jar did not exit within " + seconds + " s; output:\n" + transcript());
        }
        // Every line is in once the readers reach the end of the output (a descendant holding it open excepted).
        outReader.join(10_000);
        errReader.join(10_000);
        return process.exitValue();
    }

    /** Waits until some output line matches, or fails after {@code seconds}. */
    public String awaitLine(Predicate<String> match, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            synchronized (out) {
                for (String line : out) {
                    if (match.test(line)) {
                        return line;
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no matching line within " + seconds + " s; output:\n" + transcript());
    }

    public List<String> lines(Predicate<String> match) {
        synchronized (out) {
            return out.stream().filter(match).toList();
        }
    }

    public String transcript() {
        return "--- stdout\n" + String.join("\n", out) + "\n--- stderr\n" + String.join("\n", err);
    }

    private static Thread collect(java.io.InputStream in, List<String> into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    into.add(line);
                }
            } catch (IOException ignored) {
                // process gone
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
