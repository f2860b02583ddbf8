package dev.kolo.samples.k8s;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Builds the container image with the Jib configuration of samples/pom.xml, in a separate Maven process
 * ({@code jib:buildTar} from {@code scratch}, the only base image reachable offline), and reads the image
 * tarball: its configuration must be what the Jib configuration says, and its one layer holds exactly
 * worker.jar. Runs after {@code package}, so worker.jar exists.
 */
class ImageIT {
    private static final long TIMEOUT_SECONDS = 180;

    @Test
    void jibBuildsTheImageTheManifestsRun() throws Exception {
        Path workerJar = Path.of(System.getProperty("kolo.workerJar", "target/worker.jar")).toAbsolutePath();
        Assumptions.assumeTrue(Files.isRegularFile(workerJar), "no " + workerJar + ": run after package");
        Path samples = workerJar.getParent().getParent();
        Path mvn = Manifests.findOnPath("mvn");
        Assumptions.assumeTrue(mvn != null, "mvn is not on PATH: cannot run Jib in a separate Maven process");
        Path out = samples.resolve("target/jib-it");
        Files.createDirectories(out);
        Path tar = out.resolve("image.tar");
        Files.deleteIfExists(tar);
        Path log = out.resolve("jib-build.log");

        List<String> cmd = List.of(mvn.toString(), "-B", "-f", samples.resolve("pom.xml").toString(),
                "jib:buildTar", "-Djib.from.image=scratch", "-Djib.outputPaths.tar=" + tar,
                "-Djib.outputPaths.digest=" + out.resolve("digest"), "-Djib.outputPaths.imageId=" + out.resolve("id"),
                "-Djib.outputPaths.imageJson=" + out.resolve("image.json"));
        long start = System.nanoTime();
        Process p = new ProcessBuilder(cmd).directory(samples.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("jib:buildTar did not finish in " + TIMEOUT_SECONDS + " s; see " + log);
        }
        String output = Files.readString(log);
        if (p.exitValue() != 0) {
            // The separate Maven process resolves the module's dependencies from the local repository; a
            // plain `mvn verify` on a fresh machine has not installed the dev.kolo snapshots there.
            boolean unresolved = output.contains("Could not resolve dependencies")
                    || output.contains("Cannot access central") || output.contains("offline mode");
            Assumptions.assumeFalse(unresolved, "Jib could not resolve its inputs (the dev.kolo snapshot "
                    + "artifacts are installed by `mvn install`; Jib itself comes from Maven Central): " + log);
            throw new AssertionError("jib:buildTar failed (exit " + p.exitValue() + "):\n" + output);
        }
        System.out.printf("jib:buildTar took %.1f s%n", (System.nanoTime() - start) / 1e9);

        Map<String, byte[]> entries = untar(Files.newInputStream(tar));
        JsonNode manifest = Manifests.JSON.readTree(entries.get("manifest.json")).get(0);
        assertEquals(ImageSpec.jibTargetImage(), manifest.path("RepoTags").get(0).asText(), "image name");
        JsonNode config = Manifests.JSON.readTree(entries.get(manifest.path("Config").asText()));
        ImageSpec built = ImageSpec.fromImageConfig(config.path("config"));
        assertEquals(ImageSpec.fromJib().runtimePart(), built, "the built image runs what samples/pom.xml says");
        assertTrue(Integer.parseInt(built.user().split(":")[0]) > 0, "non-root: " + built.user());
        assertEquals(List.of("java", "-Dorg.bytedeco.javacpp.cachedir=/tmp/javacpp", "-jar", "/app/worker.jar"),
                built.entrypoint());

        // One layer (scratch has none): worker.jar itself, byte for byte, and nothing else.
        assertEquals(1, manifest.path("Layers").size(), "layers: " + manifest.path("Layers"));
        Map<String, byte[]> layer = untar(new GZIPInputStream(new java.io.ByteArrayInputStream(
                entries.get(manifest.path("Layers").get(0).asText()))));
        List<String> files = new ArrayList<>(layer.keySet());
        files.removeIf(f -> f.endsWith("/"));
        assertEquals(List.of("app/worker.jar"), files, "the layer holds worker.jar only (no classes, no libs)");
        assertArrayEquals(sha256(Files.readAllBytes(workerJar)), sha256(layer.get("app/worker.jar")));
    }

    /** A minimal ustar reader (with PAX headers skipped): name to content; directories map to empty arrays. */
    static Map<String, byte[]> untar(InputStream in) throws IOException {
        Map<String, byte[]> out = new HashMap<>();
        try (in) {
            byte[] header = new byte[512];
            String longName = null;
            while (in.readNBytes(header, 0, 512) == 512) {
                if (header[0] == 0) {
                    break;
                }
                String name = cString(header, 0, 100);
                String prefix = cString(header, 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
                long size = Long.parseLong(cString(header, 124, 12).trim().isEmpty() ? "0"
                        : cString(header, 124, 12).trim(), 8);
                char type = (char) header[156];
                byte[] data = in.readNBytes((int) size);
                in.readNBytes((int) ((512 - size % 512) % 512));
                if (type == 'x' || type == 'g') {
                    String pax = new String(data, StandardCharsets.UTF_8);
                    for (String rec : pax.split("\n")) {
                        int sp = rec.indexOf(' ');
                        if (sp > 0 && rec.substring(sp + 1).startsWith("path=")) {
                            longName = rec.substring(sp + 6);
                        }
                    }
                    continue;
                }
                if (longName != null) {
                    name = longName;
                    longName = null;
                }
                out.put(type == '5' && !name.endsWith("/") ? name + "/" : name, data);
            }
        }
        return out;
    }

    private static String cString(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    private static byte[] sha256(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

    @SuppressWarnings("unused")
    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        in.transferTo(o);
        return o.toByteArray();
    }
}
