package dev.kolo.samples.k8s;

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
        return renderFrom(Manifests.manifestsDir(), name);
    }

    /** @return overlay {@code name} of a copy of k8s-manifests/ at {@code manifests}, rendered and parsed */
    static Overlay renderFrom(Path manifests, String name) {
        Path dir = manifests.resolve("overlays").resolve(name);
        List<ObjectNode> docs = List.copyOf(MiniKustomize.render(dir).values());
        return new Overlay(name, Manifests.parseAll(docs, "overlays/" + name + ":"));
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

    /** @return the workload: the StatefulSet or the Job */
    HasMetadata workload() {
        List<HasMetadata> w = resources.stream().filter(r -> r instanceof StatefulSet || r instanceof Job).toList();
        if (w.size() != 1) {
            throw new AssertionError("overlay " + name + ": expected one StatefulSet or Job, found " + w.size());
        }
        return w.get(0);
    }

    PodTemplateSpec podTemplate() {
        HasMetadata w = workload();
        return w instanceof StatefulSet s ? s.getSpec().getTemplate() : ((Job) w).getSpec().getTemplate();
    }

    Container worker() {
        List<Container> cs = podTemplate().getSpec().getContainers();
        if (cs.size() != 1) {
            throw new AssertionError("overlay " + name + ": expected one container, found " + cs.size());
        }
        return cs.get(0);
    }

    /** @return container port name to number */
    Map<String, Integer> containerPorts() {
        return worker().getPorts().stream().collect(Collectors.toMap(ContainerPort::getName,
                ContainerPort::getContainerPort));
    }

    int np() {
        return Integer.parseInt(settings().get("KOLO_NP"));
    }
}
