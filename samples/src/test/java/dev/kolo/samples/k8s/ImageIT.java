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

    private static Path baseImage;

    /** Builds the image of samples/pom.xml from scratch, once: @return its tarball */
    static synchronized Path baseImage() throws Exception {
        if (baseImage == null) {
            Path samples = samplesDir();
            Path out = samples.resolve("target/jib-it");
            Files.createDirectories(out);
            Path tar = out.resolve("image.tar");
            Files.deleteIfExists(tar);
            jib(samples, samples.resolve("pom.xml"), out.resolve("jib-build.log"), "-Djib.from.image=scratch",
                    "-Djib.outputPaths.tar=" + tar, "-Djib.outputPaths.digest=" + out.resolve("digest"),
                    "-Djib.outputPaths.imageId=" + out.resolve("id"),
                    "-Djib.outputPaths.imageJson=" + out.resolve("image.json"));
            baseImage = tar;
        }
        return baseImage;
    }

    private static Path samplesDir() {
        Path workerJar = Path.of(System.getProperty("kolo.workerJar", "target/worker.jar")).toAbsolutePath();
        Assumptions.assumeTrue(Files.isRegularFile(workerJar), "no " + workerJar + ": run after package");
        return workerJar.getParent().getParent();
    }

    /** Runs {@code jib:buildTar} of {@code pom} in a separate Maven process. */
    private static void jib(Path dir, Path pom, Path log, String... properties) throws Exception {
        Path mvn = Manifests.findOnPath("mvn");
        Assumptions.assumeTrue(mvn != null, "mvn is not on PATH: cannot run Jib in a separate Maven process");
        List<String> cmd = new ArrayList<>(List.of(mvn.toString(), "-B", "-f", pom.toString(), "jib:buildTar"));
        cmd.addAll(List.of(properties));
        long start = System.nanoTime();
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
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
        System.out.printf("jib:buildTar of %s took %.1f s%n", pom, (System.nanoTime() - start) / 1e9);
    }

    @Test
    void jibBuildsTheImageTheManifestsRun() throws Exception {
        Path workerJar = Path.of(System.getProperty("kolo.workerJar", "target/worker.jar")).toAbsolutePath();
        Path tar = baseImage();
        Map<String, byte[]> entries = untar(Files.newInputStream(tar));
        JsonNode manifest = Manifests.JSON.readTree(entries.get("manifest.json")).get(0);
        assertEquals(ImageSpec.jibTargetImage(), manifest.path("RepoTags").get(0).asText(), "image name");
        JsonNode config = Manifests.JSON.readTree(entries.get(manifest.path("Config").asText()));
        ImageSpec built = ImageSpec.fromImageConfig(config.path("config"));
        assertEquals(ImageSpec.fromJib().runtimePart(), built, "the built image runs what samples/pom.xml says");
        assertTrue(Integer.parseInt(built.user().split(":")[0]) > 0, "non-root: " + built.user());
        assertEquals(List.of("java", "-jar", "/app/worker.jar"), built.entrypoint());

        // One layer (scratch has none): worker.jar itself, byte for byte, and nothing else.
        assertEquals(1, manifest.path("Layers").size(), "layers: " + manifest.path("Layers"));
        Map<String, byte[]> layer = untar(new GZIPInputStream(new java.io.ByteArrayInputStream(
                entries.get(manifest.path("Layers").get(0).asText()))));
        List<String> files = new ArrayList<>(layer.keySet());
        files.removeIf(f -> f.endsWith("/"));
        assertEquals(List.of("app/worker.jar"), files, "the layer holds worker.jar only (no classes, no libs)");
        assertArrayEquals(sha256(Files.readAllBytes(workerJar)), sha256(layer.get("app/worker.jar")));
    }

    /**
     * A program of your own as docs/kubernetes.md builds it (the DJL example's Jib recipe), on the image above: it
     * inherits the image's JAVA_TOOL_OPTIONS, Kolo's JVM options in them, runs its own jar, and adds its jar, its
     * libraries and its data in layers above the base's.
     */
    @Test
    void aProgramOfYourOwnBuildsOnTheImageWithKolosJvmOptions(@org.junit.jupiter.api.io.TempDir Path empty)
            throws Exception {
        Path base = baseImage();
        Path example = samplesDir().resolve("djl-example");
        Path jar = example.resolve("target/fashion-mnist-djl.jar");
        Assumptions.assumeTrue(Files.isRegularFile(jar), "no " + jar + ": the reactor builds it before samples");
        Path out = samplesDir().resolve("target/jib-it");
        Path tar = out.resolve("example.tar");
        Files.deleteIfExists(tar);
        Path data = Path.of("/usr/share/datasets/fashion-mnist");
        boolean withData = Files.isDirectory(data);
        jib(example, example.resolve("pom.xml"), out.resolve("example-build.log"), "-Dkolo.base.image=tar://" + base,
                "-Djib.outputPaths.tar=" + tar, "-Dfashion.mnist.dir=" + (withData ? data : empty),
                "-Djib.outputPaths.digest=" + out.resolve("example-digest"),
                "-Djib.outputPaths.imageId=" + out.resolve("example-id"),
                "-Djib.outputPaths.imageJson=" + out.resolve("example.json"));

        Map<String, byte[]> entries = untar(Files.newInputStream(tar));
        JsonNode manifest = Manifests.JSON.readTree(entries.get("manifest.json")).get(0);
        assertEquals("fashion-mnist-djl:" + ImageSpec.projectVersion(), manifest.path("RepoTags").get(0).asText());
        ImageSpec image = ImageSpec.fromImageConfig(Manifests.JSON.readTree(entries.get(manifest.path("Config")
                .asText())).path("config"));
        Map<String, byte[]> baseEntries = untar(Files.newInputStream(base));
        JsonNode baseManifest = Manifests.JSON.readTree(baseEntries.get("manifest.json")).get(0);
        ImageSpec baseImage = ImageSpec.fromImageConfig(Manifests.JSON.readTree(baseEntries.get(baseManifest
                .path("Config").asText())).path("config"));
        assertEquals(List.of("java", "-jar", "/app/fashion-mnist-djl.jar"), image.entrypoint());
        assertEquals(baseImage.env(), image.env(), "the base image's environment, JAVA_TOOL_OPTIONS not replaced");
        assertTrue(image.env().get("JAVA_TOOL_OPTIONS").endsWith(String.join(" ",
                dev.kolo.runtime.jvm.JvmOptions.all())), "Kolo's JVM options: " + image.env());
        assertEquals(baseImage.user(), image.user(), "the base's non-root user");

        // The base's layer, then the program's: its jar and every library its manifest names, then its data.
        List<String> layers = new ArrayList<>();
        manifest.path("Layers").forEach(l -> layers.add(l.asText()));
        assertEquals(baseManifest.path("Layers").get(0).asText().replaceAll(".*/", ""),
                layers.get(0).replaceAll(".*/", ""), "built on the base's layer");
        List<String> files = new ArrayList<>();
        for (String l : layers.subList(1, layers.size())) {
            untar(new GZIPInputStream(new java.io.ByteArrayInputStream(entries.get(l)))).keySet().stream()
                    .filter(f -> !f.endsWith("/")).forEach(files::add);
        }
        List<String> expected = new ArrayList<>(List.of("app/fashion-mnist-djl.jar"));
        try (var libs = Files.list(example.resolve("target/lib"))) {
            libs.forEach(l -> expected.add("app/lib/" + l.getFileName()));
        }
        if (withData) {
            try (var d = Files.list(data)) {
                d.forEach(f -> expected.add("usr/share/datasets/fashion-mnist/" + f.getFileName()));
            }
        }
        java.util.Collections.sort(expected);
        java.util.Collections.sort(files);
        assertEquals(expected, files, "the program's layers: its jar, its libraries, its data, nothing else");
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
