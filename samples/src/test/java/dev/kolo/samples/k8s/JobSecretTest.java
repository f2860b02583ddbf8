package dev.kolo.samples.k8s;

import static dev.kolo.samples.k8s.ManifestsTest.env;
import static dev.kolo.samples.k8s.ManifestsTest.propertyName;
import static dev.kolo.samples.k8s.ManifestsTest.withProperties;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The job secret reaches every worker from the Secret under the name the worker reads, and the worker
 * behaves as the manifests intend: authenticated with a real secret, refusing the committed placeholder,
 * and refusing to run unauthenticated on Kubernetes.
 */
class JobSecretTest {

    private static String secretValue(Secret s, String key) {
        if (s.getStringData() != null && s.getStringData().containsKey(key)) {
            return s.getStringData().get(key);
        }
        assertNotNull(s.getData(), "Secret has no key " + key);
        return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
    }

    private static Map<String, String> settings(Overlay o) {
        Map<String, String> props = new HashMap<>();
        o.settings().forEach((k, v) -> props.put(propertyName(k), v));
        props.put(propertyName("KOLO_HOST"), "10.1.2.3");
        props.put(propertyName("KOLO_RANK_HINT"), "0");
        props.put(propertyName("KOLO_JOB_SECRET"), ""); // none unless a test sets one
        return props;
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod"})
    void theWorkerReadsTheSecretFromTheSecret(String name) {
        Overlay o = Overlay.render(name);
        for (var c : o.containers()) {
            SecretKeySelector own = env(c, "KOLO_JOB_SECRET").getValueFrom().getSecretKeyRef();
            assertNotNull(own, c.getName() + ": KOLO_JOB_SECRET from a Secret");
            assertEquals(o.secret().getMetadata().getName(), own.getName(), c.getName() + ": the job's Secret");
            assertEquals("KOLO_JOB_SECRET", own.getKey(), c.getName());
            assertTrue(c.getEnv().stream().noneMatch(v -> v.getName().equals("KOLO_INSECURE")), c.getName());
        }
        EnvVar e = env(o.worker(), "KOLO_JOB_SECRET");
        SecretKeySelector ref = e.getValueFrom().getSecretKeyRef();
        assertNotNull(ref, "KOLO_JOB_SECRET comes from a Secret, never a literal or the ConfigMap");
        assertEquals(o.secret().getMetadata().getName(), ref.getName());
        assertFalse(Boolean.TRUE.equals(ref.getOptional()), "a worker must not start without it");
        // The setting the worker's code reads, under exactly that name.
        assertTrue(KoloSettings.allowed().contains(ref.getKey()), "the worker reads " + ref.getKey());
        assertEquals("KOLO_JOB_SECRET", ref.getKey());
        assertFalse(o.settings().containsKey("KOLO_JOB_SECRET"), "the secret is not in the ConfigMap");
        assertFalse(o.settings().containsKey("KOLO_INSECURE"), "the manifests never run unauthenticated");
        assertTrue(o.worker().getEnv().stream().noneMatch(v -> v.getName().equals("KOLO_INSECURE")));

        // What the pod gets: the Secret's value under that key.
        Map<String, String> props = settings(o);
        props.put(propertyName(ref.getKey()), "a-real-random-secret-" + name);
        KoloConfig c = withProperties(props, KoloConfig::fromEnvironment);
        assertEquals(Discovery.KUBERNETES, c.get(Settings.DISCOVERY));
        assertTrue(c.isSet(Settings.JOB_SECRET));
        assertFalse(c.get(Settings.INSECURE));
        assertFalse(c.toString().contains("a-real-random-secret"), c.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod"})
    void theCommittedPlaceholderIsRefusedWithTheFix(String name) {
        Overlay o = Overlay.render(name);
        String committed = secretValue(o.secret(), "KOLO_JOB_SECRET");
        Map<String, String> props = settings(o);
        props.put(propertyName("KOLO_JOB_SECRET"), committed);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> withProperties(props, KoloConfig::fromEnvironment));
        assertTrue(e.getMessage().contains("placeholder") && e.getMessage().contains("docs/kubernetes.md"),
                e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod"})
    void withoutTheSecretAWorkerRefusesToStart(String name) {
        KoloConfig c = withProperties(settings(Overlay.render(name)), KoloConfig::fromEnvironment);
        // Refused before binding a port or joining anything, so this is safe to call here.
        KoloException e = assertThrows(KoloException.class, () -> Kolo.init(c));
        assertTrue(e.getMessage().contains("KOLO_JOB_SECRET") && e.getMessage().contains("KOLO_INSECURE=true"),
                e.getMessage());
    }

    /**
     * The secret never lands in git: every secretGenerator of k8s-manifests/ reads a file git ignores and does not
     * track, and no tracked manifest of the repository is a Secret holding data.
     */
    @org.junit.jupiter.api.Test
    void theSecretComesFromAGitIgnoredFileAndNoTrackedSecretHoldsData() throws Exception {
        java.nio.file.Path root = Manifests.repoRoot();
        int generators = 0;
        for (java.nio.file.Path k : Manifests.yamlFiles()) {
            if (!Manifests.isKustomization(k)) {
                continue;
            }
            for (var g : Manifests.documents(k).get(0).path("secretGenerator")) {
                for (String field : java.util.List.of("envs", "files")) {
                    for (var source : g.path(field)) {
                        String file = root.relativize(k.getParent().resolve(source.asText()).normalize()).toString();
                        generators++;
                        assertEquals(0, git(root, "check-ignore", "-q", "--no-index", file).exitCode(), file
                                + " (a secretGenerator's source) must be git-ignored");
                        assertEquals("", git(root, "ls-files", "--", file).out().strip(), file + " is tracked");
                    }
                }
            }
        }
        assertTrue(generators > 0, "the manifests generate their Secret");
        java.util.List<String> holding = new java.util.ArrayList<>();
        for (String f : git(root, "ls-files", "--", "*.yaml", "*.yml", "*.json").out().split("\n")) {
            if (f.isBlank() || f.startsWith("samples/src/test/resources/crds/")) {
                continue;
            }
            java.util.List<com.fasterxml.jackson.databind.node.ObjectNode> docs;
            try {
                docs = Manifests.documents(root.resolve(f));
            } catch (RuntimeException notYamlObjects) {
                continue; // a JSON array, a dashboard: no Kubernetes object
            }
            for (var d : docs) {
                if (d.path("kind").asText().equals("Secret") && (d.path("data").size() > 0
                        || d.path("stringData").size() > 0)) {
                    holding.add(f + ": Secret " + d.path("metadata").path("name").asText());
                }
            }
        }
        assertEquals(java.util.List.of(), holding, "tracked Secrets holding data");
    }

    private record Git(int exitCode, String out) {
    }

    private static Git git(java.nio.file.Path dir, String... args) throws Exception {
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of("git", "-C", dir.toString()));
        cmd.addAll(java.util.List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "git " + String.join(" ", args));
        return new Git(p.exitValue(), out);
    }
}
