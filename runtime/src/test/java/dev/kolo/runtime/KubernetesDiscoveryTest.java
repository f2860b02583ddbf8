package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.KubernetesConfig;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes discovery looks up the job's headless Service and looks for a member at each of its addresses: at the
 * worker's own cluster port, or, when pods run several workers on several ports (so that they share memory), at
 * {@code KOLO_SERVICE_PORT}, that of every pod's first worker, while the worker itself binds its own port.
 */
class KubernetesDiscoveryTest {
    private static KoloConfig.Builder kubernetes() {
        return KoloConfig.builder().jobName("k8s").np(4).discovery(Discovery.KUBERNETES).set(Settings.SERVICE_DNS, "kolo-workers")
                .host("10.0.0.7").set(Settings.JOB_SECRET, "0123456789abcdef0123456789abcdef");
    }

    @Test
    void aPodsSecondWorkerBindsItsOwnPortAndLooksForTheFirstWorkersOnEveryPod() {
        Config hz = ClusterNode.hazelcastConfig(kubernetes().set(Settings.CLUSTER_PORT, 5702).set(Settings.SERVICE_PORT, 5701).build());
        KubernetesConfig k = hz.getNetworkConfig().getJoin().getKubernetesConfig();
        assertTrue(k.isEnabled());
        assertEquals("kolo-workers", k.getProperty("service-dns"));
        assertEquals("5701", k.getProperty("service-port"));
        assertEquals(5702, hz.getNetworkConfig().getPort());
    }

    @Test
    void byDefaultItLooksForItsOwnPort() {
        Config hz = ClusterNode.hazelcastConfig(kubernetes().set(Settings.CLUSTER_PORT, 5711).build());
        assertEquals("5711", hz.getNetworkConfig().getJoin().getKubernetesConfig().getProperty("service-port"));
        assertEquals(5711, hz.getNetworkConfig().getPort());
    }
}
