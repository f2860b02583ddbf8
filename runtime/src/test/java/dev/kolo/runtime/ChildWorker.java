package dev.kolo.runtime;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.BlockingQueue;

/** Starts a test main class as a separate worker process whose output lines are queued as {@code [index] line}. */
final class ChildWorker {
    private ChildWorker() {
    }

    static Process start(Class<?> main, Map<String, String> env, int index, BlockingQueue<String> lines)
            throws Exception {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                main.getName());
        pb.environment().put("KOLO_METRICS_PORT", "0");
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add("[" + index + "] " + line);
                }
            } catch (Exception ignored) {
                // the process ended
            }
        }, "child-output-" + index);
        reader.setDaemon(true);
        reader.start();
        return p;
    }
}
