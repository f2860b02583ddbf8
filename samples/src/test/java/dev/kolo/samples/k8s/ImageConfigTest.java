package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * The image as configured (Jib in samples/pom.xml, and samples/Dockerfile) agrees with itself and with the
 * manifests. {@link ImageIT} builds it with Jib and reads the built image's configuration.
 */
class ImageConfigTest {
    @Test
    void jibAndDockerfileBuildTheSameImage() throws Exception {
        ImageSpec jib = ImageSpec.fromJib();
        ImageSpec docker = ImageSpec.fromDockerfile(Manifests.repoRoot().resolve("samples/Dockerfile"));
        assertEquals(jib.base(), docker.base(), "base image");
        assertEquals(jib.runtimePart(), docker.runtimePart(), "entrypoint, user, ports, environment, labels");
        assertEquals(jib.copiedJar(), docker.copiedJar(), "where worker.jar goes");
    }

    @Test
    void theImageRunsWorkerJarAsANonRootUser() throws Exception {
        ImageSpec jib = ImageSpec.fromJib();
        assertTrue(jib.base().startsWith("eclipse-temurin:17"), "a real JRE base for users: " + jib.base());
        assertEquals("/app/worker.jar", jib.copiedJar());
        List<String> e = jib.entrypoint();
        assertEquals("java", e.get(0));
        assertEquals(List.of("-jar", "/app/worker.jar"), e.subList(e.size() - 2, e.size()), "runs worker.jar: " + e);
        String[] user = jib.user().split(":");
        assertTrue(user[0].matches("[0-9]+") && Integer.parseInt(user[0]) > 0,
                "a numeric non-root uid (Kubernetes can only verify runAsNonRoot for numeric users): " + jib.user());
        for (String overlay : List.of("elastic", "job", "two-per-pod")) {
            Overlay o = Overlay.render(overlay);
            var pod = o.podTemplate().getSpec().getSecurityContext();
            assertEquals(Long.parseLong(user[0]), pod.getRunAsUser(), overlay + ": runAsUser is the image's user");
            assertEquals(Long.parseLong(user[1]), pod.getRunAsGroup(), overlay + ": runAsGroup is the image's group");
        }
        // The JavaCPP cache (native kernels) must be writable with a read-only root file system: /tmp is.
        assertTrue(e.stream().anyMatch(a -> a.startsWith("-Dorg.bytedeco.javacpp.cachedir=/tmp/")), e.toString());
    }

    @Test
    void portsAndEnvironmentMatchTheManifests() throws Exception {
        ImageSpec jib = ImageSpec.fromJib();
        Set<String> allowed = KoloSettings.allowed();
        for (String overlay : List.of("elastic", "job", "two-per-pod")) {
            Overlay o = Overlay.render(overlay);
            // The image's defaults are the first worker's; a pod's other workers set their own ports.
            assertEquals(new TreeSet<>(Overlay.ports(o.worker()).values()), jib.ports(), overlay + ": exposed ports");
            jib.env().forEach((k, v) -> {
                if (k.startsWith("KOLO_")) {
                    assertTrue(allowed.contains(k), "image env " + k + " is not a setting the worker reads");
                    assertEquals(o.settings().get(k), v, overlay + ": image default " + k + " = the ConfigMap's");
                }
            });
        }
        assertEquals(Set.of(5701, 7070, 9404), jib.ports());
        assertTrue(jib.env().get("JAVA_TOOL_OPTIONS").contains("-XX:MaxRAMPercentage="), "heap follows the limit");
    }

    @Test
    void manifestsRunTheImageJibBuilds() throws Exception {
        String image = ImageSpec.jibTargetImage();
        assertEquals("kolo-worker:" + ImageSpec.projectVersion(), image);
        for (String overlay : List.of("elastic", "job", "two-per-pod")) {
            for (var c : Overlay.render(overlay).containers()) {
                assertEquals(image, c.getImage(), overlay + ": image of container " + c.getName());
            }
        }
    }

    @Test
    void jibIsNotPartOfTheDefaultBuild() throws Exception {
        Element jib = ImageSpec.jibPlugin();
        assertEquals("3.5.2", ImageSpec.text(jib, "version"));
        assertNull(ImageSpec.text(jib, "executions"), "Jib is bound to no phase: it runs only when asked for");
        assertNotEquals("scratch", ImageSpec.fromJib().base(), "scratch is for the offline test only");
    }
}
