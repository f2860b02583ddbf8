package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.netns.NetnsLab;
import dev.kolo.testing.ChildJvms;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two hosts of two ranks each, the hosts being network namespaces of this machine with their own addresses: the
 * ranks of a host share memory, the hosts talk TCP, and allreduces past the small sizes take the hierarchy (within
 * each host, across, within). Every collective on every dtype, through the public API, against the reference
 * ({@link CollectiveCheckWorker}), with the job's defaults but for what two hosts need (members discovery, a secret).
 * Needs root and iproute2; skipped otherwise.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class HostsCollectivesIT {
    static final int HOSTS = 2;
    static final int PER_HOST = 2;

    @Test
    void everyCollectiveAndTypeOnTwoHostsOfTwoRanks() throws Exception {
        String why = NetnsLab.unavailable();
        Assumptions.assumeTrue(why == null, "two-host test skipped: " + why);
        try (NetnsLab lab = NetnsLab.createIsolated(HOSTS); ChildJvms workers = new ChildJvms()) {
            List<String> members = new ArrayList<>();
            for (int h = 0; h < HOSTS; h++) {
                for (int l = 0; l < PER_HOST; l++) {
                    members.add(lab.address(h) + ":" + (5701 + l));
                }
            }
            Map<String, String> env = new HashMap<>();
            env.put("KOLO_JOB", "hosts-" + UUID.randomUUID().toString().substring(0, 8));
            env.put("KOLO_NP", Integer.toString(HOSTS * PER_HOST));
            env.put("KOLO_DISCOVERY", "members");
            env.put("KOLO_MEMBERS", String.join(",", members));
            env.put("KOLO_JOB_SECRET", UUID.randomUUID().toString() + UUID.randomUUID());
            env.put("KOLO_METRICS_PORT", "0");
            Path traces = Files.createTempDirectory("hosts-timeline");
            env.put("KOLO_TIMELINE", traces.resolve("trace-{rank}.json").toString());
            for (int h = 0; h < HOSTS; h++) {
                for (int l = 0; l < PER_HOST; l++) {
                    Map<String, String> e = new HashMap<>(env);
                    e.put("KOLO_HOST", lab.address(h));
                    e.put("KOLO_CLUSTER_PORT", Integer.toString(5701 + l));
                    List<String> cmd = new ArrayList<>(lab.exec(h));
                    cmd.addAll(List.of(ChildJvms.java(), "-Xmx256m", "-XX:+UseSerialGC",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                            "-Dorg.slf4j.simpleLogger.log.dev.kolo.runtime.internal.transport.connect.Endpoint=info",
                            "-Dorg.slf4j.simpleLogger.log.dev.kolo.runtime.internal.wiring.DataPlanes=info",
                            "-cp", System.getProperty("java.class.path"), CollectiveCheckWorker.class.getName()));
                    workers.start(cmd, e);
                }
            }
            List<String> ok = workers.awaitEach(0, HOSTS * PER_HOST, 200, "every worker's checks",
                    l -> l.contains("check ok") || l.contains("check failed"));
            String transcript = String.join("\n", workers.lines);
            for (String line : ok) {
                assertTrue(line.contains("check ok") && line.contains(" size=4 ") && line.contains(" local="
                        + line.replaceAll(".* local=(\\d)/.*", "$1") + "/2 "), line + "\n" + transcript);
            }
            // Each rank shares memory with the other rank of its host only, and its allreduces span the hosts.
            assertEquals(4, workers.lines.stream().filter(l -> l.contains("reaches rank [")
                    && l.contains("through shared memory")).count(), transcript);
            assertEquals(4, workers.lines.stream().filter(l -> l.contains("span its hosts hierarchically")).count(),
                    transcript);
            for (int i = 0; i < HOSTS * PER_HOST; i++) {
                assertEquals(0, workers.waitExit(i, 30), "worker " + i + "\n" + transcript);
            }
            for (int rank = 0; rank < HOSTS * PER_HOST; rank++) {
                assertPhasesAcrossHosts(new JsonArray(Files.readString(traces.resolve("trace-" + rank + ".json"))));
            }
        }
    }

    /**
     * The timeline shows where an allreduce across hosts spends its time: each exchange between hosts lies between the
     * reduce-scatter and the allgather within the host, end to start, on the tensor's track (timestamps in
     * microseconds since the epoch, which a double holds to a quarter of one).
     */
    private static void assertPhasesAcrossHosts(JsonArray events) {
        List<JsonObject> spans = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            JsonObject e = events.getJsonObject(i);
            if ("X".equals(e.getString("ph"))) {
                spans.add(e);
            }
        }
        List<JsonObject> crossings = spans.stream().filter(e -> "ALLREDUCE_ACROSS_HOSTS".equals(e.getString("name")))
                .toList();
        assertFalse(crossings.isEmpty(), "no ALLREDUCE_ACROSS_HOSTS phase in the timeline");
        for (JsonObject c : crossings) {
            double start = c.getDouble("ts");
            double end = start + c.getDouble("dur");
            assertTrue(spans.stream().anyMatch(e -> "REDUCE_SCATTER".equals(e.getString("name"))
                    && e.getValue("tid").equals(c.getValue("tid"))
                    && Math.abs(e.getDouble("ts") + e.getDouble("dur") - start) < 1), "no REDUCE_SCATTER ending where "
                    + c + " starts");
            assertTrue(spans.stream().anyMatch(e -> "ALLGATHER".equals(e.getString("name"))
                    && e.getValue("tid").equals(c.getValue("tid")) && Math.abs(e.getDouble("ts") - end) < 1),
                    "no ALLGATHER starting where " + c + " ends");
        }
    }
}
