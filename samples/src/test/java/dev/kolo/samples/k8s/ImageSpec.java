package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** What a container image runs: read from the Jib configuration, the Dockerfile, or a built image's config. */
record ImageSpec(String base, List<String> entrypoint, String workingDir, String user, TreeSet<Integer> ports,
        TreeMap<String, String> env, TreeMap<String, String> labels, String copiedJar) {

    /** The settings a comparison covers: the base image and the jar location are checked separately. */
    ImageSpec runtimePart() {
        return new ImageSpec(null, entrypoint, workingDir, user, ports, env, labels, null);
    }

    static Path samplesPom() {
        return Manifests.repoRoot().resolve("samples/pom.xml");
    }

    /** The jib-maven-plugin element of samples/pom.xml. */
    static Element jibPlugin() throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(samplesPom().toFile());
        var plugins = doc.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element p = (Element) plugins.item(i);
            if ("jib-maven-plugin".equals(text(p, "artifactId"))) {
                return p;
            }
        }
        throw new AssertionError("samples/pom.xml has no jib-maven-plugin");
    }

    /** @return the project's version: samples inherits it from the parent */
    static String projectVersion() throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(samplesPom().toFile());
        Element parent = child(doc.getDocumentElement(), "parent");
        String own = text(doc.getDocumentElement(), "version");
        return own != null ? own : text(parent, "version");
    }

    /** @return the image name samples/pom.xml gives Jib, properties resolved */
    static String jibTargetImage() throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(samplesPom().toFile());
        Element props = child(doc.getDocumentElement(), "properties");
        String image = text(child(jibPlugin(), "configuration", "to"), "image");
        if (image.equals("${kolo.image}")) {
            image = text(props, "kolo.image");
        }
        return image.replace("${project.version}", projectVersion());
    }

    static ImageSpec fromJib() throws Exception {
        Element conf = child(jibPlugin(), "configuration");
        Element container = child(conf, "container");
        List<String> entry = new ArrayList<>();
        for (Element a : children(child(container, "entrypoint"))) {
            entry.add(a.getTextContent().trim());
        }
        TreeSet<Integer> ports = new TreeSet<>();
        for (Element p : children(child(container, "ports"))) {
            ports.add(Integer.parseInt(p.getTextContent().trim()));
        }
        TreeMap<String, String> env = new TreeMap<>();
        for (Element e : children(child(container, "environment"))) {
            env.put(e.getTagName(), e.getTextContent().trim());
        }
        TreeMap<String, String> labels = new TreeMap<>();
        for (Element e : children(child(container, "labels"))) {
            labels.put(e.getTagName(), e.getTextContent().trim().replace("${project.version}", projectVersion()));
        }
        Element path = child(conf, "extraDirectories", "paths", "path");
        String jar = text(path, "into") + "/" + text(path, "includes");
        return new ImageSpec(text(child(conf, "from"), "image"), entry, text(container, "workingDirectory"),
                text(container, "user"), ports, env, labels, jar);
    }

    static ImageSpec fromDockerfile(Path dockerfile) throws IOException {
        String text = Files.readString(dockerfile).replaceAll("\\\\\\n", " ");
        String base = null;
        List<String> entry = null;
        String workdir = null;
        String user = null;
        String jar = null;
        TreeSet<Integer> ports = new TreeSet<>();
        TreeMap<String, String> env = new TreeMap<>();
        TreeMap<String, String> labels = new TreeMap<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] parts = line.split("\\s+", 2);
            String args = parts.length > 1 ? parts[1] : "";
            switch (parts[0].toUpperCase()) {
                case "FROM" -> base = args;
                case "WORKDIR" -> workdir = args;
                case "USER" -> user = args;
                case "EXPOSE" -> {
                    for (String p : args.split("\\s+")) {
                        ports.add(Integer.parseInt(p.replace("/tcp", "")));
                    }
                }
                case "ENV" -> env.putAll(keyValues(args));
                case "LABEL" -> labels.putAll(keyValues(args));
                case "ENTRYPOINT" -> {
                    List<String> l = new ArrayList<>();
                    Manifests.JSON.readTree(args).forEach(n -> l.add(n.asText()));
                    entry = l;
                }
                case "COPY" -> {
                    String[] w = args.split("\\s+");
                    if (w[w.length - 2].endsWith("worker.jar")) {
                        jar = w[w.length - 1];
                    }
                }
                default -> throw new AssertionError("Dockerfile instruction this test does not read: " + line);
            }
        }
        return new ImageSpec(base, entry, workdir, user, ports, env, labels, jar);
    }

    /** @param config the "config" object of an OCI / Docker image configuration */
    static ImageSpec fromImageConfig(JsonNode config) {
        List<String> entry = new ArrayList<>();
        config.path("Entrypoint").forEach(n -> entry.add(n.asText()));
        TreeSet<Integer> ports = new TreeSet<>();
        config.path("ExposedPorts").fieldNames().forEachRemaining(p -> {
            if (!p.endsWith("/tcp")) {
                throw new AssertionError("not a TCP port: " + p);
            }
            ports.add(Integer.parseInt(p.substring(0, p.length() - 4)));
        });
        TreeMap<String, String> env = new TreeMap<>();
        config.path("Env").forEach(n -> {
            String kv = n.asText();
            env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        });
        TreeMap<String, String> labels = new TreeMap<>();
        config.path("Labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
        return new ImageSpec(null, entry, config.path("WorkingDir").asText(null), config.path("User").asText(null),
                ports, env, labels, null);
    }

    private static final Pattern KV = Pattern.compile("([A-Za-z0-9_.-]+)=(\"([^\"]*)\"|(\\S*))");

    private static Map<String, String> keyValues(String args) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = KV.matcher(args);
        int end = 0;
        while (m.find()) {
            if (!args.substring(end, m.start()).isBlank()) {
                throw new AssertionError("cannot read '" + args + "' as key=value pairs");
            }
            out.put(m.group(1), m.group(3) != null ? m.group(3) : m.group(4));
            end = m.end();
        }
        if (!args.substring(end).isBlank()) {
            throw new AssertionError("cannot read '" + args + "' as key=value pairs");
        }
        return out;
    }

    static Element child(Element e, String... path) {
        Element cur = e;
        for (String name : path) {
            Element next = null;
            for (Element c : children(cur)) {
                if (c.getTagName().equals(name)) {
                    next = c;
                    break;
                }
            }
            if (next == null) {
                throw new AssertionError("no <" + name + "> in <" + cur.getTagName() + ">");
            }
            cur = next;
        }
        return cur;
    }

    static String text(Element e, String name) {
        for (Element c : children(e)) {
            if (c.getTagName().equals(name)) {
                return c.getTextContent().trim();
            }
        }
        return null;
    }

    static List<Element> children(Element e) {
        List<Element> out = new ArrayList<>();
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c) {
                out.add(c);
            }
        }
        return out;
    }
}
