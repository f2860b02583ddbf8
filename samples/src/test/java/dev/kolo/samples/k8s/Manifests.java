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

    /** The secret's env file, which git ignores: made on each machine that deploys (see secret/kustomization.yaml). */
    static final String SECRET_ENV = "secret/job-secret.env";
    /** Its tracked example, holding the placeholder a worker refuses. */
    static final String SECRET_ENV_EXAMPLE = "secret/job-secret.env.example";

    private static Path renderable;

    /**
     * @return a copy of k8s-manifests/ that renders: with {@value #SECRET_ENV} made from its example when the
     *     checkout has none (a fresh clone, CI), as a user makes it before the first apply. Made once per test run.
     */
    static synchronized Path renderableDir() {
        if (renderable == null) {
            try {
                Path tmp = Files.createTempDirectory("kolo-manifests");
                renderable = copyTree(manifestsDir(), tmp.resolve("k8s-manifests"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return renderable;
    }

    /** Copies k8s-manifests/ to {@code to}, and makes the secret's env file from its example if it is missing. */
    static Path copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
        Path secret = to.resolve(SECRET_ENV);
        if (!Files.exists(secret)) {
            Files.copy(to.resolve(SECRET_ENV_EXAMPLE), secret);
        }
        return to;
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
    static JsonNode normalize(JsonNode n) {
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

    /**
     * @param rendered the rendered documents
     * @return each parsed strictly: a core kind into its fabric8 model ({@link #parseStrict}), a custom kind checked
     *     against its carried schema ({@link CrdSchemas}) or, for Kubeflow Trainer's kinds, its Kubernetes and JobSet
     *     parts checked ({@link #trainerProblems}), and held as a generic resource
     */
    static List<HasMetadata> parseAll(List<ObjectNode> rendered, String where) {
        List<HasMetadata> out = new ArrayList<>();
        for (ObjectNode d : rendered) {
            String at = where + " " + d.path("kind").asText() + "/" + d.path("metadata").path("name").asText();
            String kind = d.path("kind").asText();
            if (CrdSchemas.knows(kind) || TRAINER_KINDS.contains(kind)) {
                List<String> problems = CrdSchemas.knows(kind) ? CrdSchemas.problems(d) : trainerProblems(d);
                if (!problems.isEmpty()) {
                    throw new AssertionError(at + ": does not validate against its schema: " + problems);
                }
                out.add(SERIALIZATION.unmarshal(d.toString(), GenericKubernetesResource.class));
            } else {
                out.add(parseStrict(d, at));
            }
        }
        return out;
    }

    /** Kubeflow Trainer v2's kinds: no schema of theirs is carried (see src/test/resources/crds/README.md). */
    static final java.util.Set<String> TRAINER_KINDS = java.util.Set.of("ClusterTrainingRuntime", "TrainJob");

    /**
     * The parts of a Trainer object whose schemas are carried: a runtime's JobSet template (JobSet's JobSetSpec, its
     * Job template and metadata Kubernetes', strictly), a TrainJob's trainer env and resources (Kubernetes'), and
     * every object's metadata.
     */
    static List<String> trainerProblems(JsonNode d) {
        List<String> out = new ArrayList<>();
        if (!d.path("apiVersion").asText().equals("trainer.kubeflow.org/v1alpha1")) {
            out.add("apiVersion is " + d.path("apiVersion").asText() + ", Trainer v2's is trainer.kubeflow.org/v1alpha1");
        }
        out.addAll(CrdSchemas.kubernetesProblems(d.path("metadata"), "io.fabric8.kubernetes.api.model.ObjectMeta",
                "metadata"));
        JsonNode template = d.path("spec").path("template");
        if (d.path("kind").asText().equals("ClusterTrainingRuntime")) {
            out.addAll(CrdSchemas.kubernetesProblems(template.path("metadata").isMissingNode()
                    ? JSON.createObjectNode() : template.path("metadata"), "io.fabric8.kubernetes.api.model.ObjectMeta",
                    "spec.template.metadata"));
            out.addAll(CrdSchemas.jobSetProblems(template.path("spec"), "jobset.v1alpha2.JobSetSpec",
                    "spec.template.spec"));
        } else {
            JsonNode trainer = d.path("spec").path("trainer");
            int i = 0;
            for (JsonNode env : trainer.path("env")) {
                out.addAll(CrdSchemas.kubernetesProblems(env, "io.fabric8.kubernetes.api.model.EnvVar",
                        "spec.trainer.env[" + i++ + "]"));
            }
            if (trainer.has("resourcesPerNode")) {
                out.addAll(CrdSchemas.kubernetesProblems(trainer.path("resourcesPerNode"),
                        "io.fabric8.kubernetes.api.model.ResourceRequirements", "spec.trainer.resourcesPerNode"));
            }
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
