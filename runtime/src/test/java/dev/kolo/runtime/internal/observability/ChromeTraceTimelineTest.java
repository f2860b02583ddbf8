package dev.kolo.runtime.internal.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A timeline of a job that names its tensors by step: many thousands of names. The first
 * {@link ChromeTraceTimeline#MAX_TRACKS} get a track each; the events of the others share one more track and name
 * their tensor, so the writer's map of tracks and the trace's list of them stop growing; the file is valid JSON
 * with every event in it.
 */
class ChromeTraceTimelineTest {
    @TempDir
    Path tmp;

    @Test
    void tensorsBeyondTheTrackLimitShareOneTrackAndNameTheirTensor() throws Exception {
        int names = 3 * ChromeTraceTimeline.MAX_TRACKS;
        Path file = tmp.resolve("timeline.json");
        ChromeTraceTimeline timeline = new ChromeTraceTimeline(file, 0);
        for (int i = 0; i < names; i++) {
            timeline.span("fresh." + i, "ALLREDUCE", 1000L * i, 1000L * i + 500, "tcp");
        }
        timeline.close();
        assertEquals(0, timeline.dropped(), "the writer kept up");
        assertEquals(ChromeTraceTimeline.MAX_TRACKS, timeline.trackCount(), "tracks of their own");

        JsonArray events = new JsonArray(Files.readString(file));
        Set<Integer> trackNames = new HashSet<>();
        Set<String> tensors = new HashSet<>();
        for (int i = 0; i < events.size(); i++) {
            JsonObject e = events.getJsonObject(i);
            if (e.getString("name").equals("thread_name")) {
                assertTrue(trackNames.add(e.getInteger("tid")), "one name per track: " + e);
            } else if (e.getString("ph").equals("X")) {
                int tid = e.getInteger("tid");
                assertEquals("tcp", e.getJsonObject("args").getString("transport"));
                if (tid > ChromeTraceTimeline.MAX_TRACKS) {
                    tensors.add(e.getJsonObject("args").getString("tensor"));
                }
            }
        }
        assertEquals(ChromeTraceTimeline.MAX_TRACKS + 1, trackNames.size(), "the tracks named in the trace");
        assertEquals(names - ChromeTraceTimeline.MAX_TRACKS, tensors.size(),
                "every later tensor's events name it on the shared track");
    }
}
