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
        for (String overlay : PlatformManifestsTest.OVERLAYS) {
            Overlay o = Overlay.render(overlay);
            var pod = o.podTemplate().getSpec().getSecurityContext();
            assertEquals(Long.parseLong(user[0]), pod.getRunAsUser(), overlay + ": runAsUser is the image's user");
            assertEquals(Long.parseLong(user[1]), pod.getRunAsGroup(), overlay + ": runAsGroup is the image's group");
        }
        assertEquals(List.of("java", "-jar", "/app/worker.jar"), e, "what a program of your own replaces");
        // The JavaCPP cache (native kernels) and DJL's must be writable with a read-only root file system: /tmp is.
        // In the environment, so that a program of your own built on this image has them too.
        assertTrue(jib.env().get("JAVA_TOOL_OPTIONS").contains("-Dorg.bytedeco.javacpp.cachedir=/tmp/"), jib.env()
                .toString());
        assertTrue(jib.env().get("DJL_CACHE_DIR").startsWith("/tmp/"), jib.env().toString());
    }

    @Test
    void portsAndEnvironmentMatchTheManifests() throws Exception {
        ImageSpec jib = ImageSpec.fromJib();
        Set<String> allowed = KoloSettings.allowed();
        for (String overlay : PlatformManifestsTest.OVERLAYS) {
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

    /**
     * Every JVM of the image, and of an image built on it (a program of your own), has Kolo's JVM options: they end
     * the image's JAVA_TOOL_OPTIONS, after its own defaults, as JvmOptions declares them; the manifests size the JVM
     * in JDK_JAVA_OPTIONS, which adds to them instead of replacing them.
     */
    @Test
    void theImageGivesEveryJvmKolosJvmOptions() throws Exception {
        String options = ImageSpec.fromJib().env().get("JAVA_TOOL_OPTIONS");
        assertTrue(options.endsWith(" " + String.join(" ", dev.kolo.runtime.jvm.JvmOptions.all())), "JAVA_TOOL_OPTIONS "
                + "ends with Kolo's JVM options: " + options);
        for (String overlay : PlatformManifestsTest.OVERLAYS) {
            for (var c : Overlay.render(overlay).containers()) {
                assertTrue(c.getEnv().stream().noneMatch(e -> e.getName().equals("JAVA_TOOL_OPTIONS")), overlay
                        + ": a pod's JAVA_TOOL_OPTIONS would replace the image's");
            }
        }
    }

    @Test
    void manifestsRunTheImageJibBuilds() throws Exception {
        String image = ImageSpec.jibTargetImage();
        assertEquals("kolo-worker:" + ImageSpec.projectVersion(), image);
        for (String overlay : PlatformManifestsTest.OVERLAYS) {
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
