package dev.kolo.runtime;

import dev.kolo.testing.ChildJvms;
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
        ChildJvms.pump(p, "child-output-" + index, line -> lines.add("[" + index + "] " + line));
        return p;
    }
}
