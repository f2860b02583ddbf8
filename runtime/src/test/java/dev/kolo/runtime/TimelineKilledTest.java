package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import io.vertx.core.json.JsonArray;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
        try (ChildJvms child = new ChildJvms()) {
            child.start(TimelineWorker.class, List.of("-Xmx256m"), Map.of("KOLO_JOB", LocalJob.uniqueName("trace"),
                    "KOLO_CLUSTER_PORT", Integer.toString(LocalJob.freshPortRange()), "KOLO_METRICS_PORT", "0",
                    "KOLO_TIMELINE", trace.toString()));
            child.await(0, 80, "timeline started", l -> l.contains("timeline started"));
            Thread.sleep(1500); // thousands of events in flight
            long size = Files.size(trace);
            child.process(0).destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-write
            String text = Files.readString(trace).stripTrailing();
            assertTrue(text.startsWith("[") && !text.endsWith("]"), "a killed worker writes no closing bracket");
            JsonArray events = new JsonArray(text + "]");
            assertTrue(events.size() > 100, "events: " + events.size() + ", bytes " + size);
            for (int i = 0; i < events.size(); i++) {
                assertTrue(events.getJsonObject(i).containsKey("ph"), "event " + i + " is whole: " + events.getValue(i));
            }
        }
    }
}
