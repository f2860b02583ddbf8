package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker killed while writing its timeline leaves complete events only: the file parses as JSON once the closing
 * bracket (optional in the trace format, written on close) is added; nothing else is missing or cut.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TimelineKilledTest {

    @Test
    void killedWriterLeavesValidJson(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.json");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                TimelineWorker.class.getName()).redirectErrorStream(true);
        pb.environment().put("KOLO_JOB", LocalJob.uniqueName("trace"));
        pb.environment().put("KOLO_CLUSTER_PORT", Integer.toString(LocalJob.freshPortRange()));
        pb.environment().put("KOLO_METRICS_PORT", "0");
        pb.environment().put("KOLO_TIMELINE", trace.toString());
        Process p = pb.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.contains("timeline started")) {
                    break;
                }
            }
            Thread.sleep(1500); // thousands of events in flight
            long size = Files.size(trace);
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-write
            String text = Files.readString(trace).stripTrailing();
            assertTrue(text.startsWith("[") && !text.endsWith("]"), "a killed worker writes no closing bracket");
            JsonArray events = new JsonArray(text + "]");
            assertTrue(events.size() > 100, "events: " + events.size() + ", bytes " + size);
            for (int i = 0; i < events.size(); i++) {
                assertTrue(events.getJsonObject(i).containsKey("ph"), "event " + i + " is whole: " + events.getValue(i));
            }
        } finally {
            p.destroyForcibly();
        }
    }
}
