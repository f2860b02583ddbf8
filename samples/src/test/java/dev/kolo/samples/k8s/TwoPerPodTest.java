package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kolo.runtime.Settings;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EmptyDirVolumeSource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.math.BigDecimal;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * overlays/two-per-pod: the elastic StatefulSet with two workers in each pod, sharing memory. What every
 * overlay must hold (ports agreeing with the settings, the Service and the NetworkPolicy; probes; the pod
 * count) ManifestsTest checks per container; here, what sharing a pod takes.
 */
class TwoPerPodTest {
    static final String OVERLAY = "two-per-pod";
    /** The settings that give a worker its own ports, set in the env of every worker but the first. */
    static final Set<String> PORT_ENV = Set.of("KOLO_CLUSTER_PORT", "KOLO_SERVICE_PORT", "KOLO_DATA_PORT",
            "KOLO_METRICS_PORT");

    @Test
    void twoWorkersInEachPodOfTheElasticStatefulSet() {
        Overlay o = Overlay.render(OVERLAY);
        assertTrue(o.workload() instanceof StatefulSet, "built on overlays/elastic");
        assertEquals(List.of("worker", "worker-1"), o.containers().stream().map(Container::getName).toList());
        assertEquals(o.np(), o.one(StatefulSet.class).getSpec().getReplicas() * 2, "KOLO_NP counts workers");
    }

    /**
     * The workers of a pod share memory: /dev/shm is an in-memory volume mounted by each, large enough for
     * the segment of their connection, and each sees the other's processes (it opens its peer's segment through
     * the peer's process).
     */
    @Test
    void theWorkersShareAMemoryBackedDevShmAndTheirProcesses() {
        Overlay o = Overlay.render(OVERLAY);
        PodSpec spec = o.podTemplate().getSpec();
        assertEquals(Boolean.TRUE, spec.getShareProcessNamespace(), "shareProcessNamespace");
        for (Container c : o.containers()) {
            String volume = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/dev/shm"))
                    .map(m -> m.getName()).findFirst()
                    .orElseThrow(() -> new AssertionError(c.getName() + " does not mount /dev/shm"));
            Volume v = spec.getVolumes().stream().filter(x -> x.getName().equals(volume)).findFirst()
                    .orElseThrow(() -> new AssertionError("no volume " + volume));
            EmptyDirVolumeSource dir = v.getEmptyDir();
            assertNotNull(dir, "/dev/shm is an emptyDir");
            assertEquals("Memory", dir.getMedium(), "/dev/shm in memory (tmpfs), not on the node's disk");
            assertNotNull(dir.getSizeLimit(), "bounded: it counts against the pod's memory");
            BigDecimal limit = Quantity.getAmountInBytes(dir.getSizeLimit());
            // Each connection between two co-located workers takes a segment of two rings.
            String set = o.settings(c).get(Settings.SHM_BYTES.name());
            long ring = set != null ? Long.parseLong(set) : Settings.SHM_BYTES.defaultValue();
            assertTrue(limit.longValue() >= 2 * ring, "room for a segment of two " + ring + "-byte rings: "
                    + dir.getSizeLimit());
            assertTrue(limit.compareTo(Quantity.getAmountInBytes(c.getResources().getLimits().get("memory")))
                    < 0, "a small part of the memory limit");
        }
    }

    /**
     * worker-1 is the first worker copied (image, resources, envFrom, security context, settings, secret,
     * volume mounts, probes' paths and timing) but for its name, its ports (and the settings and probes that
     * name them) and the container whose limit sizes its direct memory: its own.
     */
    @Test
    void theSecondWorkerIsOtherwiseACopyOfTheFirst() {
        Overlay o = Overlay.render(OVERLAY);
        List<Container> cs = o.containers();
        ObjectNode first = withoutOwnPorts(cs.get(0));
        ObjectNode second = withoutOwnPorts(cs.get(1));
        assertEquals(first, second, "worker-1 differs from worker only in its name and ports");
        assertTrue(cs.get(0).getEnv().stream().noneMatch(e -> PORT_ENV.contains(e.getName())),
                "the first worker takes its ports from the ConfigMap");
        assertEquals(PORT_ENV, Set.copyOf(cs.get(1).getEnv().stream().map(e -> e.getName())
                .filter(PORT_ENV::contains).toList()), "worker-1 sets its ports and the port discovery looks for");
    }

    /** A container as JSON without what is its own: name, ports, port settings, probe ports, limit reference. */
    private static ObjectNode withoutOwnPorts(Container c) {
        ObjectNode n = Manifests.JSON.valueToTree(c);
        n.remove(List.of("name", "ports"));
        for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
            ((ObjectNode) n.path(probe).path("httpGet")).remove("port");
        }
        ArrayNode env = (ArrayNode) n.get("env");
        for (int i = env.size() - 1; i >= 0; i--) {
            ObjectNode e = (ObjectNode) env.get(i);
            if (PORT_ENV.contains(e.path("name").asText())) {
                env.remove(i);
            } else if (e.path("valueFrom").has("resourceFieldRef")) {
                ObjectNode ref = (ObjectNode) e.path("valueFrom").path("resourceFieldRef");
                assertEquals(c.getName(), ref.path("containerName").asText(), e.path("name").asText()
                        + " of " + c.getName() + " follows its own limit");
                ref.remove("containerName");
            }
        }
        return n;
    }
}
