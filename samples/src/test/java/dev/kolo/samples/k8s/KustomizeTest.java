package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The overlays render, every file is used, and the Java renderer agrees with the real kustomize (required). */
class KustomizeTest {
    @Test
    void everyManifestFileIsUsedByAKustomization() throws IOException {
        Set<Path> referenced = new TreeSet<>();
        for (Path f : Manifests.yamlFiles()) {
            if (!Manifests.isKustomization(f)) {
                continue;
            }
            ObjectNode k = Manifests.documents(f).get(0);
            if (!k.path("kind").asText().equals("Component")) {
                MiniKustomize.checkKustomization(k, f);
            }
            k.path("resources").forEach(r -> referenced.add(f.getParent().resolve(r.asText()).normalize()));
            k.path("patches").forEach(p -> {
                if (p.has("path")) { // else an inline patch
                    referenced.add(f.getParent().resolve(p.path("path").asText()).normalize());
                }
            });
            k.path("configMapGenerator").forEach(g -> g.path("files").forEach(
                    file -> referenced.add(f.getParent().resolve(file.asText()).normalize())));
        }
        Set<Path> unused = new TreeSet<>();
        for (Path f : Manifests.yamlFiles()) {
            if (!Manifests.isKustomization(f) && !referenced.contains(f.normalize())) {
                unused.add(Manifests.manifestsDir().relativize(f));
            }
        }
        assertEquals(Set.of(), unused, "manifest files no kustomization lists");
        for (Path r : referenced) {
            assertTrue(Files.exists(r), "a kustomization lists a missing file: " + r);
        }
    }

    /**
     * kubectl (which embeds kustomize) renders exactly what MiniKustomize renders: the overlays, the dashboard, and
     * the overlays of a copy with another job name and size. The comparison always runs: without a kubectl whose
     * kustomize is version 5 (components need it; Debian's kubernetes-client 1.20 is too old) it fails, saying so.
     */
    @ParameterizedTest
    @ValueSource(strings = {"overlays/elastic", "overlays/job", "overlays/two-per-pod", "overlays/jobset", "grafana",
            "trainer/runtime", "trainer/runtime-gang", "trainer/job", "kueue",
            "renamed:overlays/elastic", "renamed:overlays/job", "renamed:overlays/two-per-pod",
            "renamed:overlays/jobset", "kueue+gang:overlays/elastic", "kueue+gang:overlays/job",
            "kueue+gang:overlays/two-per-pod", "kueue+gang:overlays/jobset", "kueue:trainer/job",
            "program:overlays/two-per-pod", "program:overlays/jobset", "program:trainer/job", "shm:overlays/two-per-pod"})
    void javaRendererAgreesWithKubectlKustomize(String name, @TempDir Path tmp) throws Exception {
        Path kubectl = kubectlWithKustomize5();
        Path dir = variant(name, tmp);
        Process p = new ProcessBuilder(kubectl.toString(), "kustomize", dir.toString()).redirectErrorStream(false)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl kustomize timed out");
        assertEquals(0, p.exitValue(), "kubectl kustomize " + dir + " failed: " + err);
        Map<String, ObjectNode> real = new TreeMap<>();
        for (ObjectNode d : Manifests.documents(new String(out, StandardCharsets.UTF_8))) {
            real.put(MiniKustomize.id(d), d);
        }
        Map<String, ObjectNode> mine = new TreeMap<>(MiniKustomize.render(dir));
        assertEquals(real.keySet(), mine.keySet(), "the same resources");
        for (String id : real.keySet()) {
            assertEquals(real.get(id), mine.get(id), id + " renders the same");
        }
    }

    /**
     * @param spec a directory of k8s-manifests/, after "VARIANT:" for a changed copy: renamed (another KOLO_JOB and
     *     KOLO_NP), kueue+gang / kueue (the components listed by the directory), program (a program of one's own),
     *     shm (the largest KOLO_SHM_BYTES)
     * @return the directory to render
     */
    static Path variant(String spec, Path tmp) throws IOException {
        int colon = spec.indexOf(':');
        String dir = spec.substring(colon + 1);
        String kind = colon < 0 ? "" : spec.substring(0, colon);
        Path manifests = switch (kind) {
            case "" -> Manifests.renderableDir();
            case "renamed" -> NameAndSizeTest.renamedCopy(tmp);
            default -> Variants.copy(tmp);
        };
        switch (kind) {
            case "kueue+gang" -> Variants.withComponents(manifests, dir, "kueue", "gang");
            case "kueue" -> Variants.withComponents(manifests, dir, "kueue");
            case "program" -> Variants.program(manifests);
            case "shm" -> Variants.setting(manifests, "KOLO_SHM_BYTES", "67108864");
            case "", "renamed" -> {
            }
            default -> throw new IllegalArgumentException("no variant " + kind);
        }
        return manifests.resolve(dir);
    }

    /** @return kubectl, after checking that its kustomize is version 5; else the test fails naming the fix */
    static Path kubectlWithKustomize5() throws Exception {
        String fix = ": the overlays must be compared with the real kustomize. Install a kubectl of 1.27 or later "
                + "(kustomize 5; Debian's kubernetes-client is too old for components), as .ci/run requires";
        Path kubectl = Manifests.findOnPath("kubectl");
        if (kubectl == null) {
            fail("kubectl is not on the PATH" + fix);
        }
        Process p = new ProcessBuilder(kubectl.toString(), "version", "--client").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl version --client timed out");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("Kustomize Version: v(\\d+)\\.").matcher(out);
        if (!m.find() || Integer.parseInt(m.group(1)) < 5) {
            fail(kubectl + " has no kustomize 5 (kubectl version --client says: " + out.strip() + ")" + fix);
        }
        return kubectl;
    }

    /** The dashboard as a ConfigMap that Grafana's sidecar loads, holding the dashboard file unchanged. */
    @Test
    void dashboardRendersAsAConfigMapForGrafanasSidecar() throws IOException {
        Path dir = Manifests.manifestsDir().resolve("grafana");
        Map<String, ObjectNode> rendered = MiniKustomize.render(dir);
        assertEquals(Set.of("v1|ConfigMap|kolo-dashboard"), rendered.keySet());
        ObjectNode cm = rendered.get("v1|ConfigMap|kolo-dashboard");
        var parsed = (io.fabric8.kubernetes.api.model.ConfigMap) Manifests.parseStrict(cm, "grafana");
        assertEquals("1", parsed.getMetadata().getLabels().get("grafana_dashboard"),
                "the label Grafana's dashboard sidecar looks for");
        String json = Files.readString(dir.resolve("kolo-dashboard.json"));
        assertEquals(Map.of("kolo-dashboard.json", json), parsed.getData());
        assertTrue(Manifests.JSON.readTree(json).path("uid").isTextual(), "a fixed uid: updates replace it");
    }

    @Test
    void javaRendererRejectsWhatItDoesNotImplement(@TempDir Path tmp) throws IOException {
        Files.writeString(tmp.resolve("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                + "data: {A: a}\n");
        Files.writeString(tmp.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                + "kind: Kustomization\nresources: [cm.yaml]\nnamePrefix: x-\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MiniKustomize.render(tmp));
        assertTrue(e.getMessage().contains("namePrefix"), e.getMessage());

        Files.writeString(tmp.resolve("patch.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                + "data: {B: b, A: null}\n");
        Files.writeString(tmp.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                + "kind: Kustomization\nresources: [cm.yaml]\npatches: [{path: patch.yaml}]\n");
        ObjectNode cm = MiniKustomize.render(tmp).get("v1|ConfigMap|c");
        assertEquals("{\"B\":\"b\"}", cm.get("data").toString(), "merge adds B and deletes A");

        Files.writeString(tmp.resolve("patch.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                + "binaryData: {}\nimmutable: true\nlist: [1]\n");
        e = assertThrows(IllegalArgumentException.class, () -> MiniKustomize.render(tmp));
        assertTrue(e.getMessage().contains("list"), e.getMessage());

        Files.writeString(tmp.resolve("patch.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n");
        e = assertThrows(IllegalArgumentException.class, () -> MiniKustomize.render(tmp));
        assertTrue(e.getMessage().contains("not found"), e.getMessage());

        // JSON patches: only the operations JsonPatch implements, with a target, on values that exist.
        Map<String, String> rejected = Map.of(
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: move, from: /data/A, path: /data/B}]'}]", "move",
                "patches: [{patch: '[{op: remove, path: /data/A}]'}]", "target",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: test, path: /data/A, value: b}]'}]", "test failed",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: replace, path: /data/B, value: b}]'}]", "no value",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: add, path: /data/A/x, value: b}]'}]",
                "not an object",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: add, path: /list/-, value: b}]'}]", "no value",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: remove, path: /data/A, value: a}]'}]", "value",
                "patches: [{target: {kind: ConfigMap}, patch: '[{op: add, path: \"\", value: {}}]'}]", "pointer",
                "patches: [{path: patch.yaml, patch: '[]'}]", "either",
                "patches: [{path: patch.yaml, options: {allowNameChange: true}}]", "options");
        for (var r : rejected.entrySet()) {
            Files.writeString(tmp.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                    + "kind: Kustomization\nresources: [cm.yaml]\n" + r.getKey() + "\n");
            e = assertThrows(IllegalArgumentException.class, () -> MiniKustomize.render(tmp), r.getKey());
            assertTrue(e.getMessage().contains(r.getValue()), r.getKey() + ": " + e.getMessage());
        }
    }

    /** JSON patches (RFC 6902) as kustomize applies them: what overlays/two-per-pod uses, and pointer escapes. */
    @Test
    void javaRendererAppliesJsonPatches(@TempDir Path tmp) throws IOException {
        Files.writeString(tmp.resolve("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                + "data: {A: a, B: b}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n");
        Files.writeString(tmp.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources: [cm.yaml]
                patches:
                  - target: {kind: ConfigMap}
                    patch: |-
                      - {op: test, path: /data/A, value: a}
                      - {op: copy, from: /data/A, path: /data/C}
                      - {op: replace, path: /data/A, value: x}
                      - {op: remove, path: /data/B}
                      - {op: add, path: /metadata/labels, value: {}}
                      - {op: add, path: /metadata/labels/app.kubernetes.io~1name, value: kolo}
                      - {op: add, path: /list, value: [1, 3]}
                      - {op: add, path: /list/1, value: 2}
                      - {op: add, path: /list/-, value: 4}
                      - {op: copy, from: /list/0, path: /list/-}
                      - {op: replace, path: /list/0, value: 0}
                      - {op: remove, path: /list/1}
                """);
        Map<String, ObjectNode> rendered = MiniKustomize.render(tmp);
        ObjectNode cm = rendered.get("v1|ConfigMap|c");
        assertEquals("{\"A\":\"x\",\"C\":\"a\"}", cm.get("data").toString());
        assertEquals("{\"app.kubernetes.io/name\":\"kolo\"}", cm.path("metadata").path("labels").toString());
        assertEquals("[0,3,4,1]", cm.get("list").toString());
        assertEquals("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}",
                rendered.get("v1|Secret|s").toString(), "only the target kind is patched");
    }
}
