package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Three worker processes; SIGKILL the coordinator's: the other two agree on a new one within 10 s. */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CoordinatorProcessKillTest {
    private final ChildJvms jvms = new ChildJvms();

    @AfterEach
    void stopAll() {
        jvms.close();
    }

    @Test
    void killingTheCoordinatorProcessElectsANewOne() throws Exception {
        String job = LocalJob.uniqueName("proc");
        int ports = LocalJob.freshPortRange();
        for (int i = 0; i < 3; i++) {
            startProbe(job, ports);
        }
        Map<Integer, String[]> probes = new HashMap<>(); // index -> {rank, node, coordinator}
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        int barriersPassed = 0;
        while (probes.size() < 3 || barriersPassed < 3) {
            String line = jvms.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertNotNull(line, "workers did not all report a rank and pass a barrier in time; got "
                    + probes.keySet() + ", " + barriersPassed + " barriers");
            if (line.contains("probe barrier passed")) {
                barriersPassed++;
            }
            if (line.contains("probe rank=")) {
                int index = Integer.parseInt(line.substring(1, line.indexOf(']')));
                probes.put(index, new String[] {field(line, "rank"), field(line, "node"), field(line, "coordinator")});
            }
        }
        assertEquals(3, probes.values().stream().map(p -> p[0]).distinct().count(), "ranks must be distinct");
        assertEquals(1, probes.values().stream().map(p -> p[2]).distinct().count(), "one coordinator");
        String oldCoordinator = probes.get(0)[2];
        int victim = probes.entrySet().stream().filter(e -> e.getValue()[1].equals(oldCoordinator))
                .findFirst().orElseThrow().getKey();

        long killedAt = System.nanoTime();
        // Process.destroyForcibly sends SIGKILL on Linux.
        jvms.process(victim).destroyForcibly().waitFor(10, TimeUnit.SECONDS);

        Map<Integer, String> newCoordinator = new HashMap<>();
        while (newCoordinator.size() < 2) {
            long left = killedAt + TimeUnit.SECONDS.toNanos(10) - System.nanoTime();
            String line = jvms.poll(Math.max(1, left), TimeUnit.NANOSECONDS);
            assertNotNull(line, "survivors did not report a new coordinator within 10 s: " + newCoordinator);
            if (line.contains("probe coordinator=")) {
                newCoordinator.put(Integer.parseInt(line.substring(1, line.indexOf(']'))), field(line, "coordinator"));
            }
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        assertEquals(1, newCoordinator.values().stream().distinct().count(), "survivors disagree: " + newCoordinator);
        String chosen = newCoordinator.values().iterator().next();
        assertTrue(!chosen.equals(oldCoordinator));
        assertTrue(probes.entrySet().stream().anyMatch(e -> e.getKey() != victim && e.getValue()[1].equals(chosen)),
                "the new coordinator must be a survivor");
        System.out.println("after SIGKILL of the coordinator, survivors agreed in " + tookMillis + " ms");
    }

    private static String field(String line, String name) {
        int at = line.indexOf(" " + name + "=");
        if (at < 0) {
            at = line.indexOf(name + "=");
        } else {
            at++;
        }
        int end = line.indexOf(' ', at);
        return line.substring(at + name.length() + 1, end < 0 ? line.length() : end);
    }

    private void startProbe(String job, int ports) throws Exception {
        jvms.start(ProbeWorker.class, List.of("-Xmx256m"), Map.of("KOLO_METRICS_PORT", "0", "KOLO_JOB", job,
                "KOLO_NP", "3", "KOLO_CLUSTER_PORT", Integer.toString(ports), "KOLO_RENDEZVOUS_TIMEOUT", "150"));
    }
}
