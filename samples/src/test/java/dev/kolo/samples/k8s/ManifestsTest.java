package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.elastic.ElasticJobFailedException;
import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.samples.mnist.TrainingJob;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceFieldSelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicyRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PodMetricsEndpoint;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The manifests of every overlay, rendered and parsed strictly, and checked against each other and against
 * what the worker reads and serves; a pod may run several workers (overlays/two-per-pod), each checked.
 */
class ManifestsTest {
    /** The worker's HTTP endpoints on KOLO_METRICS_PORT (the observability work serves exactly these). */
    static final String LIVE = "/health/live";
    static final String READY = "/health/ready";
    static final String METRICS = "/metrics";

    static final Map<String, String> PORT_SETTINGS = Map.of(
            "hazelcast", "KOLO_CLUSTER_PORT", "data", "KOLO_DATA_PORT", "metrics", "KOLO_METRICS_PORT");
    static final List<String> REQUIRED_LABELS = List.of("app.kubernetes.io/name", "app.kubernetes.io/instance",
            "app.kubernetes.io/component", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by");

    @Test
    void everyManifestFileParsesStrictly() {
        List<Path> files = Manifests.yamlFiles();
        int resources = 0;
        for (Path f : files) {
            if (Manifests.isKustomization(f)) {
                continue;
            }
            String where = Manifests.manifestsDir().relativize(f).toString();
            var docs = Manifests.documents(f);
            assertFalse(docs.isEmpty(), where + " is empty");
            for (var d : docs) {
                // Patches are partial resources; they must still only use fields the model (or schema) knows.
                Manifests.parseAll(List.of(d), where);
                resources++;
            }
        }
        assertTrue(resources >= 10, "expected the base and both overlays, parsed " + resources + " documents");
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void overlayHasEveryPart(String name) {
        Overlay o = Overlay.render(name);
        assertNotNull(o.configMap());
        assertNotNull(o.secret());
        if (o.workload().getKind().equals("JobSet")) {
            assertEquals(List.of(), o.all(Service.class), "JobSet makes the job's headless Service itself");
        } else {
            assertNotNull(o.service());
        }
        assertNotNull(o.checkpointClaim());
        assertNotNull(o.networkPolicy());
        assertNotNull(o.podMonitor());
        assertNotNull(o.workload());
        for (HasMetadata r : o.resources) {
            for (String label : REQUIRED_LABELS) {
                assertNotNull(r.getMetadata().getLabels() == null ? null : r.getMetadata().getLabels().get(label),
                        name + ": " + r.getKind() + "/" + r.getMetadata().getName() + " lacks label " + label);
            }
            assertEquals(o.settings().get("KOLO_JOB"), r.getMetadata().getLabels().get("app.kubernetes.io/instance"),
                    r.getKind() + ": app.kubernetes.io/instance is the job name");
            assertNull(r.getMetadata().getNamespace(), r.getKind() + ": namespace is chosen at deploy time (kubectl -n)");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void selectorsMatchThePodLabels(String name) {
        Overlay o = Overlay.render(name);
        Map<String, String> pod = o.podTemplate().getMetadata().getLabels();
        for (String label : List.of("app.kubernetes.io/name", "app.kubernetes.io/instance",
                "app.kubernetes.io/component")) {
            assertNotNull(pod.get(label), "pod template lacks " + label);
        }
        for (Service svc : o.all(Service.class)) {
            assertSelects(svc.getSpec().getSelector(), pod, "Service");
        }
        for (PodDisruptionBudget pdb : o.all(PodDisruptionBudget.class)) {
            assertSelects(pdb.getSpec().getSelector(), pod, "PodDisruptionBudget");
        }
        assertSelects(o.networkPolicy().getSpec().getPodSelector(), pod, "NetworkPolicy");
        assertSelects(o.podMonitor().getSpec().getSelector(), pod, "PodMonitor");
        if (o.workload() instanceof StatefulSet s) {
            assertSelects(s.getSpec().getSelector(), pod, "StatefulSet");
        }
        // The pod anti-affinity spreads these very pods.
        var terms = o.podTemplate().getSpec().getAffinity().getPodAntiAffinity()
                .getPreferredDuringSchedulingIgnoredDuringExecution();
        assertFalse(terms.isEmpty());
        terms.forEach(t -> {
            assertSelects(t.getPodAffinityTerm().getLabelSelector(), pod, "podAntiAffinity");
            assertEquals("kubernetes.io/hostname", t.getPodAffinityTerm().getTopologyKey());
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void portsAgreeAcrossConfigMapContainerServiceAndPolicy(String name) {
        Overlay o = Overlay.render(name);
        for (Container c : o.containers()) {
            // Each worker listens where its own settings say: the ConfigMap's, or its env where it overrides them.
            Map<String, Integer> own = Overlay.portsByRole(c);
            Map<String, String> settings = o.settings(c);
            assertEquals(PORT_SETTINGS.keySet(), own.keySet(), c.getName() + ": container ports");
            PORT_SETTINGS.forEach((port, setting) -> assertEquals(Integer.parseInt(settings.get(setting)),
                    own.get(port), c.getName() + ": " + setting + " vs its container port '" + port + "'"));
            assertTrue(own.get("data") > 0, "KOLO_DATA_PORT must be fixed (not 0, any free port) on Kubernetes");
        }
        assertEquals(Settings.CLUSTER_PORT.defaultValue(), Overlay.portsByRole(o.worker()).get("hazelcast"));
        Map<String, Integer> container = o.containerPorts();
        Set<Integer> metricsPorts = new HashSet<>();
        o.containers().forEach(c -> metricsPorts.add(Overlay.portsByRole(c).get("metrics")));

        Map<String, Integer> servicePorts = new HashMap<>();
        for (ServicePort p : o.all(Service.class).stream().flatMap(svc -> svc.getSpec().getPorts().stream()).toList()) {
            IntOrString target = p.getTargetPort();
            int targetNumber = target.getStrVal() != null ? container.getOrDefault(target.getStrVal(), -1)
                    : target.getIntVal();
            assertEquals(p.getPort(), targetNumber, "Service port " + p.getName() + " targets container port "
                    + target);
            assertEquals("TCP", p.getProtocol());
            servicePorts.put(p.getName(), p.getPort());
        }
        if (o.workload().getKind().equals("JobSet")) {
            servicePorts.putAll(container); // JobSet's own headless Service: DNS names only, no ports to match
        }
        assertEquals(container, servicePorts, "the Service exposes exactly the ports of the pod's containers");

        NetworkPolicy np = o.networkPolicy();
        assertEquals(List.of("Ingress"), np.getSpec().getPolicyTypes());
        Set<Integer> admittedFromPeers = new HashSet<>();
        boolean prometheus = false;
        Map<String, String> pod = o.podTemplate().getMetadata().getLabels();
        for (NetworkPolicyIngressRule rule : np.getSpec().getIngress()) {
            assertFalse(rule.getFrom() == null || rule.getFrom().isEmpty(), "an ingress rule without 'from' admits "
                    + "everyone");
            assertFalse(rule.getPorts() == null || rule.getPorts().isEmpty(), "an ingress rule without ports admits "
                    + "every port");
            Set<Integer> ports = new HashSet<>();
            for (NetworkPolicyPort p : rule.getPorts()) {
                int n = p.getPort().getIntVal() != null ? p.getPort().getIntVal()
                        : container.get(p.getPort().getStrVal());
                assertTrue(container.containsValue(n), "NetworkPolicy admits port " + n + " the pod does not open");
                ports.add(n);
            }
            for (NetworkPolicyPeer peer : rule.getFrom()) {
                assertNull(peer.getIpBlock(), "no ipBlock peers: only pods");
                if (peer.getNamespaceSelector() == null) {
                    assertSelects(peer.getPodSelector(), pod, "NetworkPolicy peer (the job's own pods)");
                    admittedFromPeers.addAll(ports);
                } else {
                    // Another namespace: only the Prometheus scraper, only the metrics port.
                    assertNotNull(peer.getPodSelector(), "a namespace peer must also select pods");
                    assertEquals("prometheus", peer.getPodSelector().getMatchLabels().get("app.kubernetes.io/name"));
                    assertEquals(metricsPorts, ports, "the scraper reaches every worker's metrics port, and only "
                            + "those");
                    prometheus = true;
                }
            }
        }
        assertEquals(new HashSet<>(container.values()), admittedFromPeers, "workers reach each other on all ports of "
                + "every container");
        assertTrue(prometheus, "Prometheus is admitted to the metrics port");
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void discoveryUsesTheHeadlessService(String name) {
        Overlay o = Overlay.render(name);
        assertEquals("kubernetes", o.settings().get("KOLO_DISCOVERY"));
        String dns = o.settings().get("KOLO_SERVICE_DNS");
        String svcName = o.discoveryServiceName();
        assertTrue(dns.equals(svcName) || dns.matches(Pattern.quote(svcName) + "\\.[a-z0-9-]+\\.svc(\\..+)?"),
                "KOLO_SERVICE_DNS '" + dns + "' names the Service '" + svcName + "'");
        if (o.workload().getKind().equals("JobSet")) {
            // JobSet's Service: named after the JobSet (no subdomain set), listing pods before they are ready.
            var network = Manifests.JSON.valueToTree(o.workload()).path("spec").path("network");
            assertTrue(network.path("subdomain").isMissingNode(), "the Service is named after the JobSet");
            assertTrue(network.path("publishNotReadyAddresses").asBoolean(false), "workers must find each other "
                    + "before they are ready");
            assertTrue(network.path("enableDNSHostnames").asBoolean(false));
            return;
        }
        Service svc = o.service();
        assertEquals("None", svc.getSpec().getClusterIP(), "headless");
        assertEquals(Boolean.TRUE, svc.getSpec().getPublishNotReadyAddresses(),
                "workers must find each other before they are ready");
        if (o.workload() instanceof StatefulSet s) {
            assertEquals(svcName, s.getSpec().getServiceName(), "StatefulSet serviceName");
        } else {
            assertEquals(svcName, o.podTemplate().getSpec().getSubdomain(), "Job pods' subdomain");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void probesUseTheWorkersHealthEndpoints(String name) {
        Overlay o = Overlay.render(name);
        for (Container c : o.containers()) {
            // Each container's probes resolve a port name among its own ports, and reach its own worker.
            int own = Integer.parseInt(o.settings(c).get("KOLO_METRICS_PORT"));
            String what = c.getName() + " ";
            assertProbe(c.getStartupProbe(), LIVE, own, c, what + "startupProbe");
            assertProbe(c.getReadinessProbe(), READY, own, c, what + "readinessProbe");
            assertProbe(c.getLivenessProbe(), LIVE, own, c, what + "livenessProbe");
            Probe startup = c.getStartupProbe();
            int startupSeconds = startup.getPeriodSeconds() * startup.getFailureThreshold();
            assertTrue(startupSeconds >= Double.parseDouble(o.settings(c).get("KOLO_RENDEZVOUS_TIMEOUT")),
                    "the startup probe waits at least the rendezvous timeout (" + startupSeconds + " s)");
        }
        // Annotation-based scraping takes one port per pod: the first worker's.
        int metrics = Integer.parseInt(o.settings(o.worker()).get("KOLO_METRICS_PORT"));

        Map<String, String> annotations = o.podTemplate().getMetadata().getAnnotations();
        assertEquals("true", annotations.get("prometheus.io/scrape"));
        assertEquals(String.valueOf(metrics), annotations.get("prometheus.io/port"));
        assertEquals(METRICS, annotations.get("prometheus.io/path"));
        PodMonitor pm = o.podMonitor();
        assertEquals("kube-prometheus-stack", pm.getMetadata().getLabels().get("release"),
                "the label a default kube-prometheus-stack Prometheus selects PodMonitors by");
        // The Prometheus Operator scrapes every worker: one endpoint per container's metrics port.
        List<String> scraped = new ArrayList<>();
        for (PodMetricsEndpoint ep : pm.getSpec().getPodMetricsEndpoints()) {
            assertEquals(METRICS, ep.getPath());
            scraped.add(ep.getPort());
        }
        List<String> metricsPortNames = new ArrayList<>();
        for (Container c : o.containers()) {
            c.getPorts().stream().filter(p -> p.getName().replaceFirst("-[0-9]+$", "").equals("metrics"))
                    .forEach(p -> metricsPortNames.add(p.getName()));
        }
        assertEquals(metricsPortNames, scraped, "PodMonitor ports name the containers' metrics ports");
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void configMapAndSecretHoldOnlySettingsTheWorkerReads(String name) {
        Overlay o = Overlay.render(name);
        Set<String> allowed = KoloSettings.allowed();
        Set<String> unknown = new TreeSet<>(o.settings().keySet());
        unknown.removeAll(allowed);
        assertEquals(Set.of(), unknown, "ConfigMap keys the worker does not read (known: " + allowed + ")");
        Set<String> secretKeys = new TreeSet<>();
        if (o.secret().getData() != null) {
            secretKeys.addAll(o.secret().getData().keySet());
        }
        if (o.secret().getStringData() != null) {
            secretKeys.addAll(o.secret().getStringData().keySet());
        }
        assertEquals(Set.of("KOLO_JOB_SECRET"), secretKeys, "Secret keys");

        // Pod environment: every KOLO_* name is known; references resolve to the ConfigMap and Secret.
        for (Container c : o.containers()) {
            assertEquals(1, c.getEnvFrom().size());
            assertEquals(o.configMap().getMetadata().getName(), c.getEnvFrom().get(0).getConfigMapRef().getName());
            assertNull(c.getEnvFrom().get(0).getPrefix());
            for (EnvVar e : c.getEnv()) {
                if (e.getName().startsWith("KOLO_")) {
                    assertTrue(allowed.contains(e.getName()), "pod env " + e.getName() + " is not a known setting");
                }
                if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                    var ref = e.getValueFrom().getSecretKeyRef();
                    assertEquals(o.secret().getMetadata().getName(), ref.getName());
                    assertTrue(secretKeys.contains(ref.getKey()), "secret key " + ref.getKey());
                    assertEquals(e.getName(), ref.getKey());
                }
                if (e.getValueFrom() != null) {
                    assertNull(e.getValueFrom().getConfigMapKeyRef(), "settings come through envFrom");
                }
            }
        }
        assertEquals(Boolean.FALSE, o.podTemplate().getSpec().getEnableServiceLinks(),
                "service links would inject KOLO_*_SERVICE_HOST variables for Services named kolo-*");
    }

    /** The worker's own reader accepts the ConfigMap plus the pod environment and reads the values we meant. */
    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void theWorkerReadsTheSettings(String name) {
        Overlay o = Overlay.render(name);
        int firstClusterPort = Overlay.portsByRole(o.worker()).get("hazelcast");
        for (Container container : o.containers()) {
            Map<String, Integer> own = Overlay.portsByRole(container);
            Map<String, String> props = new HashMap<>();
            o.settings(container).forEach((k, v) -> props.put(propertyName(k), v));
            props.put(propertyName("KOLO_HOST"), "10.1.2.3"); // status.podIP
            props.put(propertyName("KOLO_RANK_HINT"), "");      // label or annotation missing: fall back to HOSTNAME
            props.put("HOSTNAME", o.workload().getMetadata().getName() + "-3");
            KoloConfig c = withProperties(props, KoloConfig::fromEnvironment);
            String w = container.getName() + ": ";
            assertEquals(Discovery.KUBERNETES, c.get(Settings.DISCOVERY));
            assertEquals(o.settings().get("KOLO_JOB"), c.get(Settings.JOB));
            assertEquals(o.settings().get("KOLO_SERVICE_DNS"), c.get(Settings.SERVICE_DNS));
            assertEquals(own.get("hazelcast"), c.get(Settings.CLUSTER_PORT), w + "cluster port");
            assertEquals(own.get("data"), c.get(Settings.DATA_PORT), w + "data port");
            assertEquals(own.get("metrics"), c.get(Settings.METRICS_PORT), w + "metrics port");
            // DNS discovery finds one port per pod address: every worker looks for the first worker's.
            assertEquals(firstClusterPort, c.get(Settings.SERVICE_PORT), w + "KOLO_SERVICE_PORT is the first worker's cluster port");
            assertEquals(o.np(), c.get(Settings.NP));
            assertEquals("10.1.2.3", c.get(Settings.HOST));
            assertEquals(3, c.get(Settings.RANK_HINT), "the pod ordinal from HOSTNAME is the rank hint");
            assertTrue(c.get(Settings.HEARTBEAT_TIMEOUT).getSeconds() * 2
                    < o.podTemplate().getSpec().getTerminationGracePeriodSeconds(),
                    "the grace period outlasts a heartbeat timeout");

            props.put(propertyName("KOLO_RANK_HINT"), "2"); // label or annotation present
            assertEquals(2, withProperties(props, KoloConfig::fromEnvironment).get(Settings.RANK_HINT));
        }
    }

    /**
     * The sample training job's mode follows the overlay: the StatefulSet's settings make the worker elastic
     * (training under Elastic.run, regrouping after a lost pod, SIGTERM leaving at the next commit), the Job's
     * fixed (a lost pod stops the round, the recreated pods resume); both name the checkpoint directory, which
     * the worker takes as its default --checkpoint-dir.
     */
    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void theSampleTrainsElasticOrFixedAsTheOverlayMeans(String name) {
        Overlay o = Overlay.render(name);
        Map<String, String> props = new HashMap<>();
        o.settings().forEach((k, v) -> props.put(propertyName(k), v));
        KoloConfig c = withProperties(props, KoloConfig::fromEnvironment);
        assertEquals(o.workload() instanceof StatefulSet, c.elastic(), "elastic mode of the " + name + " overlay");
        Path dir = withProperties(props, Checkpointer.Builder::defaultDirectory)
                .orElseThrow(() -> new AssertionError("no checkpoint directory: a restart could not resume"));
        assertEquals(Path.of(o.settings().get("KOLO_CHECKPOINT_DIR")), dir);
        long grace = o.podTemplate().getSpec().getTerminationGracePeriodSeconds();
        if (c.elastic()) {
            assertTrue(grace >= TrainingJob.LEAVE_TIMEOUT.toSeconds() + 30, "a SIGTERMed worker waits up to "
                    + TrainingJob.LEAVE_TIMEOUT.toSeconds() + " s for its next commit, then flushes its checkpoint and "
                    + "leaves the cluster, within the grace period (" + grace + " s)");
        } else {
            assertTrue(grace >= TrainingJob.LEAVE_TIMEOUT.toSeconds() + 30, "a SIGTERMed fixed job stops at its next "
                    + "step, rank 0 checkpoints it: a worker waits up to " + TrainingJob.LEAVE_TIMEOUT.toSeconds()
                    + " s for that, within the grace period (" + grace + " s)");
            List<PodFailurePolicyRule> rules = o.jobSpec().getPodFailurePolicy().getRules();
            assertTrue(rules.stream().noneMatch(r -> r.getAction().equals("FailJob") && r.getOnExitCodes() != null
                    && r.getOnExitCodes().getValues().contains(ElasticJobFailedException.EXIT_STATUS)),
                    "the survivors of a lost worker exit with " + ElasticJobFailedException.EXIT_STATUS
                            + "; their replacements must be started to resume");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void podSurvivesAndLeavesGracefully(String name) {
        Overlay o = Overlay.render(name);
        for (Container c : o.containers()) {
            podSurvivesAndLeavesGracefully(o, c);
        }
    }

    private static void podSurvivesAndLeavesGracefully(Overlay o, Container c) {
        PodSpec spec = o.podTemplate().getSpec();
        assertTrue(spec.getTerminationGracePeriodSeconds() >= 60, "time for a graceful leave");

        // Rank hint: the pod's stable index.
        EnvVar hint = env(c, "KOLO_RANK_HINT");
        String field = hint.getValueFrom().getFieldRef().getFieldPath();
        if (o.workload() instanceof StatefulSet) {
            assertEquals("metadata.labels['apps.kubernetes.io/pod-index']", field);
        } else {
            assertEquals("metadata.annotations['batch.kubernetes.io/job-completion-index']", field);
        }
        assertEquals("status.podIP", env(c, "KOLO_HOST").getValueFrom().getFieldRef().getFieldPath());

        // Checkpoints on the shared volume the ConfigMap names.
        var claim = o.checkpointClaim();
        assertEquals(List.of("ReadWriteMany"), claim.getSpec().getAccessModes(),
                "any pod, on any node, resumes from rank 0's checkpoints");
        Volume v = spec.getVolumes().stream().filter(x -> x.getPersistentVolumeClaim() != null).findFirst()
                .orElseThrow(() -> new AssertionError("no checkpoint volume"));
        assertEquals(claim.getMetadata().getName(), v.getPersistentVolumeClaim().getClaimName());
        VolumeMount m = c.getVolumeMounts().stream().filter(x -> x.getName().equals(v.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("checkpoint volume not mounted"));
        assertEquals(o.settings(c).get("KOLO_CHECKPOINT_DIR"), m.getMountPath());
        assertFalse(Boolean.TRUE.equals(m.getReadOnly()));

        // Non-root, read-only root file system with a writable /tmp (JavaCPP's cache, Vert.x's file cache).
        assertEquals(Boolean.TRUE, spec.getSecurityContext().getRunAsNonRoot());
        assertTrue(spec.getSecurityContext().getRunAsUser() > 0);
        assertEquals(Boolean.TRUE, c.getSecurityContext().getReadOnlyRootFilesystem());
        assertEquals(Boolean.FALSE, c.getSecurityContext().getAllowPrivilegeEscalation());
        assertTrue(c.getVolumeMounts().stream().anyMatch(x -> x.getMountPath().equals("/tmp")), "/tmp writable");

        // Quick eviction from a failed node.
        Set<String> tolerated = new HashSet<>();
        spec.getTolerations().forEach(t -> {
            assertTrue(t.getTolerationSeconds() <= 60);
            tolerated.add(t.getKey());
        });
        assertEquals(Set.of("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"), tolerated);
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void resourcesAreGuaranteedAndTheJvmFitsTheLimit(String name) {
        Overlay o = Overlay.render(name);
        for (Container c : o.containers()) {
            resourcesAreGuaranteedAndTheJvmFitsTheLimit(o, c);
        }
    }

    private static void resourcesAreGuaranteedAndTheJvmFitsTheLimit(Overlay o, Container c) {
        Map<String, Quantity> req = c.getResources().getRequests();
        Map<String, Quantity> lim = c.getResources().getLimits();
        assertEquals(Set.of("cpu", "memory"), lim.keySet());
        for (String r : lim.keySet()) {
            assertEquals(Quantity.getAmountInBytes(lim.get(r)), Quantity.getAmountInBytes(req.get(r)),
                    r + ": requests equal limits");
        }
        BigDecimal limit = Quantity.getAmountInBytes(lim.get("memory"));

        // JAVA_TOOL_OPTIONS sizes heap and direct memory from the container limit.
        List<String> defined = new ArrayList<>();
        Map<String, EnvVar> byName = new HashMap<>();
        for (EnvVar e : c.getEnv()) {
            for (String ref : Manifests.varRefs(e.getValue())) {
                assertTrue(defined.contains(ref), e.getName() + " refers to $(" + ref + ") which is not defined "
                        + "before it (Kubernetes expands only earlier variables)");
            }
            defined.add(e.getName());
            byName.put(e.getName(), e);
        }
        // The image's JAVA_TOOL_OPTIONS hold Kolo's JVM options: a pod that set them would replace them.
        assertNull(byName.get("JAVA_TOOL_OPTIONS"), c.getName() + ": the memory flags go in JDK_JAVA_OPTIONS");
        String opts = byName.get("JDK_JAVA_OPTIONS").getValue();
        Matcher heap = Pattern.compile("-XX:MaxRAMPercentage=([0-9.]+)").matcher(opts);
        assertTrue(heap.find(), opts);
        double heapFraction = Double.parseDouble(heap.group(1)) / 100;
        Matcher direct = Pattern.compile("-XX:MaxDirectMemorySize=\\$\\(([A-Z_]+)\\)m").matcher(opts);
        assertTrue(direct.find(), "MaxDirectMemorySize follows the limit: " + opts);
        ResourceFieldSelector f = byName.get(direct.group(1)).getValueFrom().getResourceFieldRef();
        assertEquals("limits.memory", f.getResource());
        assertEquals(c.getName(), f.getContainerName());
        // The variable is ceil(limit / divisor); with "m" it means that many MiB.
        BigDecimal divisor = Quantity.getAmountInBytes(f.getDivisor());
        double directFraction = (double) (1 << 20) / divisor.doubleValue();
        double directBytes = Math.ceil(limit.doubleValue() / divisor.doubleValue()) * (1 << 20);
        assertEquals(directFraction, directBytes / limit.doubleValue(), 1e-6);
        assertTrue(heapFraction + directFraction <= 0.8, "heap " + heapFraction + " + direct " + directFraction
                + " of the limit leave at least 20% for the rest of the process");
        assertTrue(directFraction >= 0.1 && heapFraction >= 0.25, "neither starved");
        assertTrue(opts.contains("-XX:+ExitOnOutOfMemoryError"), "an OOM restarts the pod rather than limping on");
    }

    /** Kubernetes refuses a pod whose containers share a name, a port name or a port number. */
    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void containerNamesAndPortsAreUniqueInThePod(String name) {
        Overlay o = Overlay.render(name);
        List<String> names = new ArrayList<>();
        List<String> portNames = new ArrayList<>();
        List<Integer> portNumbers = new ArrayList<>();
        for (Container c : o.containers()) {
            names.add(c.getName());
            c.getPorts().forEach(p -> {
                portNames.add(p.getName());
                portNumbers.add(p.getContainerPort());
            });
        }
        assertEquals(new TreeSet<>(names).size(), names.size(), "container names " + names);
        assertEquals(new TreeSet<>(portNames).size(), portNames.size(), "port names in the pod " + portNames);
        assertEquals(new TreeSet<>(portNumbers).size(), portNumbers.size(), "port numbers in the pod " + portNumbers);
    }

    /**
     * KOLO_NP counts workers, and the first rendezvous waits for that many: the pods times the workers in each
     * must be KOLO_NP. The component copies KOLO_NP to the pod count of a pod of one worker; an overlay with
     * more workers per pod writes its pod count itself, and this catches the two drifting apart.
     */
    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset"})
    void podsTimesWorkersPerPodIsKoloNp(String name) {
        assertPodsTimesWorkersPerPodIsKoloNp(Overlay.render(name));
    }

    static void assertPodsTimesWorkersPerPodIsKoloNp(Overlay o) {
        int workersPerPod = o.containers().size();
        if (o.workload() instanceof StatefulSet s) {
            assertEquals(o.np(), s.getSpec().getReplicas() * workersPerPod, o.name + ": replicas " + s.getSpec()
                    .getReplicas() + " x " + workersPerPod + " workers per pod = KOLO_NP");
        } else {
            var j = o.jobSpec();
            assertEquals(o.np(), j.getCompletions() * workersPerPod, o.name + ": completions x workers");
            assertEquals(o.np(), j.getParallelism() * workersPerPod, o.name + ": parallelism x workers");
        }
    }

    @Test
    void elasticOverlayIsAParallelStatefulSet() {
        Overlay o = Overlay.render("elastic");
        StatefulSet s = o.one(StatefulSet.class);
        assertEquals("Parallel", s.getSpec().getPodManagementPolicy());
        assertEquals(o.np(), s.getSpec().getReplicas(), "replicas = KOLO_NP");
        int min = Integer.parseInt(o.settings().get("KOLO_MIN_NP"));
        int max = Integer.parseInt(o.settings().get("KOLO_MAX_NP"));
        assertTrue(min < o.np() && o.np() < max, "elastic bounds around KOLO_NP: " + min + " " + o.np() + " " + max);
        assertTrue(s.getSpec().getVolumeClaimTemplates() == null || s.getSpec().getVolumeClaimTemplates().isEmpty(),
                "checkpoints live on the shared claim");
        PodDisruptionBudget pdb = o.pdb();
        assertEquals(new IntOrString(1), pdb.getSpec().getMaxUnavailable());
        assertNull(pdb.getSpec().getMinAvailable());
    }

    @ParameterizedTest
    @ValueSource(strings = {"job", "jobset"})
    void jobOverlayIsAnIndexedJobWithAFailurePolicy(String name) {
        Overlay o = Overlay.render(name);
        var spec = o.jobSpec();
        assertEquals("Indexed", spec.getCompletionMode());
        assertEquals(o.np(), spec.getCompletions(), "completions = KOLO_NP");
        assertEquals(o.np(), spec.getParallelism(), "all workers at once");
        assertFalse(o.settings().containsKey("KOLO_MIN_NP"), "a run-to-completion job is not elastic");
        assertEquals("Never", spec.getTemplate().getSpec().getRestartPolicy(),
                "podFailurePolicy needs restartPolicy Never");
        List<PodFailurePolicyRule> rules = spec.getPodFailurePolicy().getRules();
        assertTrue(rules.stream().anyMatch(r -> r.getAction().equals("Ignore") && r.getOnPodConditions() != null
                && r.getOnPodConditions().stream().anyMatch(c -> c.getType().equals("DisruptionTarget"))),
                "node failures and drains do not count against the backoff limit");
        assertTrue(rules.stream().anyMatch(r -> r.getAction().equals("FailJob") && r.getOnExitCodes() != null
                && r.getOnExitCodes().getContainerName().equals(o.worker().getName())
                && r.getOnExitCodes().getValues().contains(2)), "a usage error (exit 2) fails the job at once");
        assertTrue(rules.stream().anyMatch(r -> r.getAction().equals("FailJob") && r.getOnExitCodes() != null
                && r.getOnExitCodes().getContainerName().equals(o.worker().getName())
                && r.getOnExitCodes().getValues().contains(dev.kolo.runtime.KoloConfigurationException.EXIT_STATUS)),
                "a configuration error (exit " + dev.kolo.runtime.KoloConfigurationException.EXIT_STATUS
                        + ") fails the job at once instead of restarting pods up to the backoff limit");
        assertNull(spec.getBackoffLimit(), "retries are counted per index, not per pod: one lost worker "
                + "fails all KOLO_NP pods of a round, so a pod count would have to follow KOLO_NP");
        assertTrue(spec.getBackoffLimitPerIndex() >= 1, "a round of failures may be retried");
        assertEquals(0, spec.getMaxFailedIndexes(), "an index out of retries fails the job at once");
        assertTrue(rules.stream().anyMatch(r -> r.getAction().equals("Ignore") && r.getOnExitCodes() != null
                && r.getOnExitCodes().getContainerName().equals(o.worker().getName())
                && r.getOnExitCodes().getValues().equals(List.of(ElasticJobFailedException.STOPPED_STATUS))),
                "a job stopped as asked, its step checkpointed (exit " + ElasticJobFailedException.STOPPED_STATUS
                        + "), is a disruption: the recreated pods resume from that step");
        assertEquals(List.of(), o.all(PodDisruptionBudget.class), "evicting the workers of a fixed job one at a "
                + "time would restart it once per worker");
    }

    @Test
    void theStrictParserRejectsUnknownFieldsAndKinds() {
        String typo = """
                apiVersion: v1
                kind: Service
                metadata: {name: x}
                spec:
                  clusterIP: None
                  publishNotReadyAdresses: true
                """;
        AssertionError e = assertThrowsAssertion(() -> Manifests.parseStrict(Manifests.documents(typo).get(0), "t"));
        assertTrue(e.getMessage().contains("publishNotReadyAdresses"), e.getMessage());
        String nested = """
                apiVersion: apps/v1
                kind: StatefulSet
                metadata: {name: x}
                spec:
                  template:
                    spec:
                      containers:
                        - name: w
                          readinessProbe: {httpGet: {path: /health/ready, prot: 9404}}
                """;
        e = assertThrowsAssertion(() -> Manifests.parseStrict(Manifests.documents(nested).get(0), "t"));
        assertTrue(e.getMessage().contains("prot"), e.getMessage());
        String kind = """
                apiVersion: monitoring.coreos.com/v1
                kind: PodMonitorr
                metadata: {name: x}
                """;
        assertThrowsAssertion(() -> Manifests.parseStrict(Manifests.documents(kind).get(0), "t"));
    }

    // --- helpers

    static void assertSelects(LabelSelector selector, Map<String, String> labels, String what) {
        assertNotNull(selector, what + " has no selector");
        assertTrue(selector.getMatchExpressions() == null || selector.getMatchExpressions().isEmpty(),
                what + ": matchLabels only");
        assertSelects(selector.getMatchLabels(), labels, what);
    }

    static void assertSelects(Map<String, String> matchLabels, Map<String, String> labels, String what) {
        assertNotNull(matchLabels, what + " selects nothing");
        assertFalse(matchLabels.isEmpty(), what + " has an empty selector (selects every pod)");
        matchLabels.forEach((k, v) -> assertEquals(v, labels.get(k), what + " selects " + k + "=" + v
                + " but the pod template has " + labels.get(k)));
    }

    /** A probe of container {@code c}: Kubernetes resolves a named port among that container's own ports. */
    static void assertProbe(Probe p, String path, int metricsPort, Container c, String what) {
        assertNotNull(p, what);
        HTTPGetAction get = p.getHttpGet();
        assertNotNull(get, what + " is an HTTP probe");
        assertEquals(path, get.getPath(), what + " path");
        String named = get.getPort().getStrVal();
        assertTrue(named == null || Overlay.ports(c).containsKey(named), what + ": port '" + named + "' is not a port "
                + "of container " + c.getName() + " " + Overlay.ports(c).keySet());
        int port = named != null ? Overlay.ports(c).get(named) : get.getPort().getIntVal();
        assertEquals(metricsPort, port, what + " probes KOLO_METRICS_PORT");
    }

    static EnvVar env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no env " + name));
    }

    /** KoloConfig's property name of a KOLO_* variable: KOLO_MIN_NP is kolo.min.np. */
    static String propertyName(String env) {
        return "kolo." + env.substring(5).toLowerCase(java.util.Locale.ROOT).replace('_', '.');
    }

    static <T> T withProperties(Map<String, String> props, java.util.function.Supplier<T> body) {
        Map<String, String> saved = new HashMap<>();
        props.keySet().forEach(k -> saved.put(k, System.getProperty(k)));
        try {
            props.forEach(System::setProperty);
            return body.get();
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    static AssertionError assertThrowsAssertion(Runnable r) {
        try {
            r.run();
        } catch (AssertionError e) {
            return e;
        }
        return fail("expected the strict parser to reject this");
    }
}
