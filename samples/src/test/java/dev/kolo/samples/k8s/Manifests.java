package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** Finds, reads and strictly parses the manifests under {@code k8s-manifests/}. */
final class Manifests {
    static final ObjectMapper YAML = new YAMLMapper();
    static final ObjectMapper JSON = new ObjectMapper();
    static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Manifests() {
    }

    /** @return the repository root (the folder holding {@code k8s-manifests/} and {@code samples/}) */
    static Path repoRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("k8s-manifests")) && Files.isDirectory(p.resolve("samples"))) {
                return p;
            }
        }
        throw new IllegalStateException("no k8s-manifests/ above " + dir);
    }

    static Path manifestsDir() {
        return repoRoot().resolve("k8s-manifests");
    }

    /** @return every YAML file under k8s-manifests/, sorted */
    static List<Path> yamlFiles() {
        try (Stream<Path> s = Files.walk(manifestsDir())) {
            return s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean isKustomization(Path p) {
        String n = p.getFileName().toString();
        return n.equals("kustomization.yaml") || n.equals("kustomization.yml") || n.equals("Kustomization");
    }

    /** @return the documents of a (possibly multi-document) YAML text, empty documents dropped */
    static List<ObjectNode> documents(String yaml) {
        List<ObjectNode> docs = new ArrayList<>();
        try (var parser = new YAMLFactory().createParser(yaml)) {
            var it = YAML.readValues(parser, JsonNode.class);
            while (it.hasNext()) {
                JsonNode n = it.next();
                if (n == null || n.isNull() || n.isMissingNode()) {
                    continue;
                }
                if (!n.isObject()) {
                    throw new IllegalArgumentException("a YAML document is not a mapping: " + n);
                }
                docs.add((ObjectNode) n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    static List<ObjectNode> documents(Path file) {
        try {
            return documents(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Parses one document into its Kubernetes model class and rejects anything the model does not know:
     * an unregistered kind, a field the model has no property for, or a value it could not place.
     */
    static HasMetadata parseStrict(JsonNode doc, String where) {
        KubernetesResource r;
        try {
            r = SERIALIZATION.unmarshal(JSON.writeValueAsString(doc), KubernetesResource.class);
        } catch (IOException | RuntimeException e) {
            throw new AssertionError(where + ": does not parse as a Kubernetes resource: " + e.getMessage(), e);
        }
        if (r instanceof GenericKubernetesResource g) {
            throw new AssertionError(where + ": no model class for " + g.getApiVersion() + " " + g.getKind()
                    + " (unknown kind or apiVersion)");
        }
        if (!(r instanceof HasMetadata h)) {
            throw new AssertionError(where + ": not a top-level resource: " + r.getClass().getName());
        }
        List<String> unknown = new ArrayList<>();
        collectUnknownFields(h, h.getKind(), unknown, 0);
        if (!unknown.isEmpty()) {
            throw new AssertionError(where + ": fields the Kubernetes model does not know (typo or wrong place?): "
                    + unknown);
        }
        // Round trip: what the model holds, written back, must be what the file says (nothing dropped or
        // coerced). Unknown fields would survive a round trip, hence the check above as well.
        JsonNode back = JSON.valueToTree(h);
        if (!normalize(doc).equals(normalize(back))) {
            throw new AssertionError(where + ": the model does not hold the file's content exactly:\n file:  "
                    + normalize(doc) + "\n model: " + normalize(back));
        }
        return h;
    }

    /** For comparison: integers as longs, null fields dropped, YAML's typing otherwise kept. */
    private static JsonNode normalize(JsonNode n) {
        if (n.isObject()) {
            ObjectNode out = JSON.createObjectNode();
            // A null field is an absent one (kubectl writes creationTimestamp: null).
            n.fields().forEachRemaining(e -> {
                if (!e.getValue().isNull()) {
                    out.set(e.getKey(), normalize(e.getValue()));
                }
            });
            return out;
        }
        if (n.isArray()) {
            var out = JSON.createArrayNode();
            n.forEach(x -> out.add(normalize(x)));
            return out;
        }
        if (n.isIntegralNumber()) {
            return JSON.getNodeFactory().numberNode(n.longValue());
        }
        return n;
    }

    /**
     * Walks the model object graph: every fabric8 model object keeps fields it does not know in
     * {@code getAdditionalProperties()}; each non-empty one is reported with its path.
     */
    static void collectUnknownFields(Object o, String path, List<String> out, int depth) {
        if (o == null || depth > 64) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object x : c) {
                collectUnknownFields(x, path + "[" + i++ + "]", out, depth + 1);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> collectUnknownFields(v, path + "[" + k + "]", out, depth + 1));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method g : o.getClass().getMethods()) {
            if (g.getParameterCount() != 0 || Modifier.isStatic(g.getModifiers()) || !g.getName().startsWith("get")
                    || g.getName().equals("getClass")) {
                continue;
            }
            Class<?> t = g.getReturnType();
            boolean model = t.getName().startsWith("io.fabric8.");
            if (!model && !Collection.class.isAssignableFrom(t) && !Map.class.isAssignableFrom(t)) {
                continue;
            }
            Object v;
            try {
                v = g.invoke(o);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue; // computed accessors of some model classes; not data
            }
            if (g.getName().equals("getAdditionalProperties")) {
                if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    out.add(path + " " + extra.keySet());
                }
                continue;
            }
            String name = Character.toLowerCase(g.getName().charAt(3)) + g.getName().substring(4);
            collectUnknownFields(v, path + "." + name, out, depth + 1);
        }
    }

    /** @param rendered the rendered documents; @return each parsed strictly */
    static List<HasMetadata> parseAll(List<ObjectNode> rendered, String where) {
        List<HasMetadata> out = new ArrayList<>();
        for (ObjectNode d : rendered) {
            out.add(parseStrict(d, where + " " + d.path("kind").asText() + "/" + d.path("metadata").path("name")
                    .asText()));
        }
        return out;
    }

    private static final Pattern VAR_REF = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    /** @return the {@code $(NAME)} references in a container env value */
    static List<String> varRefs(String value) {
        List<String> out = new ArrayList<>();
        Matcher m = VAR_REF.matcher(value == null ? "" : value);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** @return the executable {@code command} on PATH, or null */
    static Path findOnPath(String command) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        for (String d : dirs) {
            if (d.isEmpty()) {
                continue;
            }
            Path p = Path.of(d, command);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
