package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The job's name and worker count are written once, as {@code KOLO_JOB} and {@code KOLO_NP} in
 * base/configmap.yaml: changed there, every name, reference, label, selector and pod count follows.
 */
class NameAndSizeTest {
    static final String NAME = "fmnist-a";
    /** Even, so that overlays/two-per-pod can hold it: two workers in each of NP / 2 pods. */
    static final int NP = 6;
    /** The default job name, and the names in base/ and the overlays before the job's name replaces "kolo". */
    static final java.util.Set<String> STALE = java.util.Set.of("kolo-train", "kolo-config", "kolo-secret",
            "kolo-workers", "kolo-checkpoints", "kolo-worker");

    @Test
    void theDefaultNameIsWrittenOnce() throws IOException {
        String name = Overlay.render("job").settings().get("KOLO_JOB");
        List<String> places = new ArrayList<>();
        for (Path f : Manifests.yamlFiles()) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(name) && !lines.get(i).trim().startsWith("#")) {
                    places.add(Manifests.manifestsDir().relativize(f) + ":" + (i + 1));
                }
            }
        }
        assertEquals(List.of("base/configmap.yaml:" + lineOf("base/configmap.yaml", "KOLO_JOB:")), places,
                "the job name '" + name + "' outside KOLO_JOB in base/configmap.yaml");
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod"})
    void everyPlaceFollowsKoloJobAndKoloNp(String overlay, @TempDir Path tmp) throws IOException {
        Overlay o = Overlay.renderFrom(renamedCopy(tmp), overlay);
        assertEquals(NAME, o.settings().get("KOLO_JOB"));
        for (HasMetadata r : o.resources) {
            assertTrue(r.getMetadata().getName().startsWith(NAME + "-"), r.getKind() + " " + r.getMetadata().getName()
                    + " is named after the job");
            assertEquals(NAME, r.getMetadata().getLabels().get("app.kubernetes.io/instance"), r.getKind());
        }
        String configMap = o.one(ConfigMap.class).getMetadata().getName();
        String secret = o.one(Secret.class).getMetadata().getName();
        String service = o.one(Service.class).getMetadata().getName();
        String claim = o.one(PersistentVolumeClaim.class).getMetadata().getName();
        assertEquals(service, o.settings().get("KOLO_SERVICE_DNS"), "discovery asks the job's own Service");
        for (Container c : o.containers()) {
            assertEquals(configMap, c.getEnvFrom().get(0).getConfigMapRef().getName(), c.getName());
            EnvVar secretVar = c.getEnv().stream().filter(e -> e.getName().equals("KOLO_JOB_SECRET"))
                    .findFirst().orElseThrow();
            assertEquals(secret, secretVar.getValueFrom().getSecretKeyRef().getName(), c.getName());
        }
        assertEquals(claim, o.podTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getPersistentVolumeClaim() != null).findFirst().orElseThrow()
                .getPersistentVolumeClaim().getClaimName());
        assertEquals(NAME, o.podTemplate().getMetadata().getLabels().get("app.kubernetes.io/instance"));
        // The pod count: KOLO_NP where a pod runs one worker; overlays/two-per-pod's own number, which the copy
        // changed with KOLO_NP as the README says.
        assertEquals(NP, o.np());
        ManifestsTest.assertPodsTimesWorkersPerPodIsKoloNp(o);
        if (o.workload() instanceof StatefulSet s) {
            assertEquals(service, s.getSpec().getServiceName());
        } else {
            Job j = (Job) o.workload();
            assertEquals(service, j.getSpec().getTemplate().getSpec().getSubdomain());
        }
        // Selectors and the anti-affinity are checked against the pod labels by ManifestsTest for the default
        // name; here: no value anywhere still carries the placeholder or the default name.
        List<String> leftovers = new ArrayList<>();
        for (HasMetadata r : o.resources) {
            collectStrings(Manifests.JSON.valueToTree(r), r.getKind(), leftovers);
        }
        List<String> stale = leftovers.stream().filter(v -> {
            String path = v.substring(0, v.indexOf('='));
            String value = v.substring(v.indexOf('=') + 1);
            return STALE.contains(value) || path.endsWith("app.kubernetes.io/instance") && !value.equals(NAME);
        }).toList();
        assertEquals(List.of(), stale, "values that did not follow KOLO_JOB");
    }

    /** Where overlays/two-per-pod writes its pod count, KOLO_NP / 2 (Kustomize does not divide). */
    static final String TWO_PER_POD_PODS = "overlays/two-per-pod/pods.yaml";

    /**
     * @return a copy of k8s-manifests/ changed as a user sizes and names another job: KOLO_JOB and KOLO_NP in
     *         base/configmap.yaml, and the pod count of overlays/two-per-pod, which KOLO_NP cannot reach
     */
    static Path renamedCopy(Path tmp) throws IOException {
        Path copy = Manifests.copyTree(Manifests.manifestsDir(), tmp.resolve("k8s-manifests"));
        Path cm = copy.resolve("base/configmap.yaml");
        String text = Files.readString(cm);
        String renamed = text.replaceFirst("(?m)^  KOLO_JOB: .*$", "  KOLO_JOB: " + NAME)
                .replaceFirst("(?m)^  KOLO_NP: .*$", "  KOLO_NP: \"" + NP + "\"");
        assertTrue(!renamed.equals(text) && renamed.contains(NAME) && renamed.contains("\"" + NP + "\""), renamed);
        Files.writeString(cm, renamed);
        // overlays/two-per-pod counts pods, not workers: KOLO_NP / 2, changed with KOLO_NP.
        Path pods = copy.resolve(TWO_PER_POD_PODS);
        text = Files.readString(pods);
        java.util.regex.Matcher replicas = java.util.regex.Pattern.compile("(?m)^  replicas: [0-9]+$").matcher(text);
        assertTrue(replicas.find(), TWO_PER_POD_PODS + " holds no replicas line: " + text);
        Files.writeString(pods, replicas.replaceFirst("  replicas: " + NP / 2));
        return copy;
    }

    private static int lineOf(String file, String prefix) throws IOException {
        List<String> lines = Files.readAllLines(Manifests.manifestsDir().resolve(file));
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().startsWith(prefix)) {
                return i + 1;
            }
        }
        throw new AssertionError(file + " has no " + prefix);
    }

    /** Collects "path=value" for every string in the tree. */
    private static void collectStrings(JsonNode n, String path, List<String> out) {
        if (n.isTextual()) {
            out.add(path + "=" + n.asText());
        } else if (n.isContainerNode()) {
            n.fields().forEachRemaining(e -> collectStrings(e.getValue(), path + "." + e.getKey(), out));
            for (int i = 0; n.isArray() && i < n.size(); i++) {
                collectStrings(n.get(i), path + "[" + i + "]", out);
            }
        }
    }
}
