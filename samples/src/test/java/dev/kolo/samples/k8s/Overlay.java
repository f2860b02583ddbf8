package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** One rendered overlay of k8s-manifests/, parsed strictly, with typed access to its resources. */
final class Overlay {
    final String name;
    final List<HasMetadata> resources;

    private Overlay(String name, List<HasMetadata> resources) {
        this.name = name;
        this.resources = resources;
    }

    private static final Map<String, Overlay> RENDERED = new java.util.concurrent.ConcurrentHashMap<>();

    /** @return the overlay rendered and parsed (once per test run: the model objects are not modified) */
    static Overlay render(String name) {
        return RENDERED.computeIfAbsent(name, Overlay::renderNow);
    }

    private static Overlay renderNow(String name) {
        return renderFrom(Manifests.renderableDir(), name);
    }

    /** @return overlay {@code name} of a copy of k8s-manifests/ at {@code manifests}, rendered and parsed */
    static Overlay renderFrom(Path manifests, String name) {
        return renderPath(manifests, "overlays/" + name, name);
    }

    /** @return the kustomization at {@code relative} in a copy of k8s-manifests/ (trainer/job...), rendered, parsed */
    static Overlay renderPath(Path manifests, String relative, String name) {
        List<ObjectNode> docs = List.copyOf(MiniKustomize.render(manifests.resolve(relative)).values());
        return new Overlay(name, Manifests.parseAll(docs, relative + ":"));
    }

    /** @return the rendered resources as JSON, for the kinds without a model class (JobSet, TrainJob...) */
    List<JsonNode> json(String kind) {
        return resources.stream().filter(r -> r.getKind().equals(kind)).map(r -> (JsonNode) Manifests.JSON
                .valueToTree(r)).toList();
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return resources.stream().filter(type::isInstance).map(type::cast).toList();
    }

    <T extends HasMetadata> T one(Class<T> type) {
        List<T> l = all(type);
        if (l.size() != 1) {
            throw new AssertionError("overlay " + name + ": expected one " + type.getSimpleName() + ", found "
                    + l.size());
        }
        return l.get(0);
    }

    ConfigMap configMap() {
        return one(ConfigMap.class);
    }

    Map<String, String> settings() {
        return configMap().getData();
    }

    Secret secret() {
        return one(Secret.class);
    }

    Service service() {
        return one(Service.class);
    }

    /** @return the headless Service discovery asks: base/'s, or the one JobSet makes, named after the JobSet */
    String discoveryServiceName() {
        HasMetadata w = workload();
        return w.getKind().equals("JobSet") ? w.getMetadata().getName() : service().getMetadata().getName();
    }

    PersistentVolumeClaim checkpointClaim() {
        return one(PersistentVolumeClaim.class);
    }

    PodDisruptionBudget pdb() {
        return one(PodDisruptionBudget.class);
    }

    NetworkPolicy networkPolicy() {
        return one(NetworkPolicy.class);
    }

    PodMonitor podMonitor() {
        return one(PodMonitor.class);
    }

    /** @return the workload: the StatefulSet, the Job, or the JobSet (a generic resource) */
    HasMetadata workload() {
        List<HasMetadata> w = resources.stream().filter(r -> r instanceof StatefulSet || r instanceof Job
                || r.getKind().equals("JobSet")).toList();
        if (w.size() != 1) {
            throw new AssertionError("overlay " + name + ": expected one StatefulSet, Job or JobSet, found " + w.size());
        }
        return w.get(0);
    }

    /** @return the Job's spec: the Job's, or that of the JobSet's one replicated job */
    JobSpec jobSpec() {
        HasMetadata w = workload();
        return w instanceof Job j ? j.getSpec() : jobSetJob(w).getSpec();
    }

    /** @return the template of a JobSet's one replicated job, as the Kubernetes model (validated when rendered) */
    static JobTemplateSpec jobSetJob(HasMetadata jobSet) {
        JsonNode jobs = Manifests.JSON.valueToTree(jobSet).path("spec").path("replicatedJobs");
        if (jobs.size() != 1) {
            throw new AssertionError(jobSet.getMetadata().getName() + ": expected one replicated job, found "
                    + jobs.size());
        }
        return Manifests.JSON.convertValue(jobs.get(0).path("template"), JobTemplateSpec.class);
    }

    PodTemplateSpec podTemplate() {
        HasMetadata w = workload();
        return w instanceof StatefulSet s ? s.getSpec().getTemplate() : jobSpec().getTemplate();
    }

    /** @return the pod's containers: one worker each, the first worker first */
    List<Container> containers() {
        return podTemplate().getSpec().getContainers();
    }

    /** @return the pod's first worker, the one every overlay has (named "worker") */
    Container worker() {
        Container c = containers().get(0);
        if (!c.getName().equals("worker")) {
            throw new AssertionError("overlay " + name + ": the first container is " + c.getName());
        }
        return c;
    }

    /** @return container port name to number, over every container of the pod (names are unique in a pod) */
    Map<String, Integer> containerPorts() {
        return containers().stream().flatMap(c -> c.getPorts().stream()).collect(Collectors.toMap(
                ContainerPort::getName, ContainerPort::getContainerPort));
    }

    /** @return one container's port name to number: what its probes' named ports resolve against */
    static Map<String, Integer> ports(Container c) {
        return c.getPorts().stream().collect(Collectors.toMap(ContainerPort::getName, ContainerPort::getContainerPort));
    }

    /**
     * @return one container's port by role ("hazelcast", "data", "metrics"): a port is named after its role, in
     *         the first worker, or after its role and the worker's position ("data-1")
     */
    static Map<String, Integer> portsByRole(Container c) {
        return c.getPorts().stream().collect(Collectors.toMap(p -> p.getName().replaceFirst("-[0-9]+$", ""),
                ContainerPort::getContainerPort));
    }

    /**
     * @return the KOLO_* settings one container runs with: the ConfigMap's (envFrom), overridden by the
     *         container's own literal env values (Kubernetes gives env precedence over envFrom)
     */
    Map<String, String> settings(Container c) {
        Map<String, String> out = new java.util.TreeMap<>(settings());
        c.getEnv().stream().filter(e -> e.getName().startsWith("KOLO_") && e.getValue() != null)
                .forEach(e -> out.put(e.getName(), e.getValue()));
        return out;
    }

    int np() {
        return Integer.parseInt(settings().get("KOLO_NP"));
    }
}
