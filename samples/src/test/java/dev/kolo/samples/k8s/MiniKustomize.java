package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The subset of kustomize that k8s-manifests/ uses, so the overlays render on machines without
 * kustomize: {@code resources} (files and kustomization folders, such as an overlay built on another);
 * {@code configMapGenerator} from files, or merging literals into a ConfigMap, with a fixed name;
 * {@code secretGenerator} from env files with a fixed name; {@code components}, each with resources, patches and
 * {@link Replacements replacements} of its own; {@code patches}, each a file ({@code path}) or inline
 * ({@code patch}), optionally with a {@code target} kind (one that selects nothing patches nothing, as in
 * kustomize), holding either a strategic-merge patch of maps only (for maps, strategic merge and JSON merge agree;
 * {@code $patch: delete} removes the target) or a JSON patch (a list of operations, with a {@code target};
 * {@link JsonPatch} lists the operations); and {@code replacements}. Steps run in kustomize's order: resources,
 * generators, components, patches, replacements; resources annotated {@code config.kubernetes.io/local-config} are
 * read but not output. Anything else is rejected, so an overlay that grows past this subset fails the tests rather
 * than being rendered wrongly; {@link KustomizeTest} also checks this renderer against {@code kubectl kustomize}.
 */
final class MiniKustomize {
    static final Set<String> SUPPORTED_KEYS = Set.of("apiVersion", "kind", "resources", "patches", "components",
            "configMapGenerator", "secretGenerator", "replacements");
    static final Set<String> SUPPORTED_COMPONENT_KEYS = Set.of("apiVersion", "kind", "resources", "patches",
            "replacements");
    /** Kustomize reads a resource so annotated (a replacement's source, say) and leaves it out of its output. */
    static final String LOCAL_CONFIG = "config.kubernetes.io/local-config";

    private MiniKustomize() {
    }

    /** @return the rendered resources of the kustomization in {@code dir}, keyed by apiVersion|kind|name */
    static Map<String, ObjectNode> render(Path dir) {
        Path file = dir.resolve("kustomization.yaml");
        ObjectNode k = kustomization(dir);
        checkKustomization(k, file);
        Map<String, ObjectNode> accumulated = new LinkedHashMap<>();
        addResources(k, dir, file, accumulated);
        for (JsonNode g : k.path("configMapGenerator")) {
            ObjectNode cm = generateConfigMap(dir, g, file);
            if (g.path("behavior").asText("create").equals("merge")) {
                mergeInto(accumulated, cm, file);
            } else {
                add(accumulated, cm, file);
            }
        }
        for (JsonNode g : k.path("secretGenerator")) {
            add(accumulated, generateSecret(dir, g, file), file);
        }
        Map<String, ObjectNode> rendered = accumulated;
        for (JsonNode c : k.path("components")) {
            rendered = applyComponent(dir.resolve(c.asText()).normalize(), rendered);
        }
        rendered = transform(k, dir, file, rendered);
        rendered.values().removeIf(d -> d.path("metadata").path("annotations").path(LOCAL_CONFIG).asText()
                .equals("true"));
        return rendered;
    }

    private static void addResources(ObjectNode k, Path dir, Path file, Map<String, ObjectNode> accumulated) {
        for (JsonNode r : k.path("resources")) {
            Path p = dir.resolve(r.asText()).normalize();
            List<ObjectNode> loaded = new ArrayList<>();
            if (Files.isDirectory(p)) {
                loaded.addAll(render(p).values());
            } else {
                loaded.addAll(Manifests.documents(p));
            }
            loaded.forEach(d -> add(accumulated, d, file));
        }
    }

    /** A kustomization's or a component's own transformers, in kustomize's order: patches, then replacements. */
    private static Map<String, ObjectNode> transform(ObjectNode k, Path dir, Path file, Map<String, ObjectNode> in) {
        Map<String, ObjectNode> rendered = rekeyed(in);
        for (JsonNode patchRef : k.path("patches")) {
            patch(rendered, patchRef, dir, file);
        }
        for (JsonNode r : k.path("replacements")) {
            Replacements.apply(r, rendered.values(), file);
        }
        return rekeyed(rendered);
    }

    /** One entry of {@code patches}: a strategic-merge patch or a JSON patch, from a file or inline. */
    private static void patch(Map<String, ObjectNode> rendered, JsonNode patchRef, Path dir, Path file) {
        String where;
        String text;
        if (patchRef.has("path")) {
            Path p = dir.resolve(patchRef.path("path").asText()).normalize();
            where = p.toString();
            try {
                text = Files.readString(p);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        } else {
            where = file + ": inline patch";
            text = patchRef.path("patch").asText();
        }
        String targetKind = patchRef.path("target").path("kind").asText(null);
        List<JsonNode> docs = yamlDocuments(text);
        if (docs.stream().anyMatch(JsonNode::isArray)) {
            require(docs.size() == 1, where + ": a JSON patch is one list of operations");
            require(targetKind != null, where + ": a JSON patch needs a target");
            for (ObjectNode t : ofKind(rendered, targetKind, where)) {
                JsonPatch.apply(t, docs.get(0), where);
            }
            return;
        }
        for (JsonNode doc : docs) {
            require(doc.isObject(), where + ": a patch is a resource or a list of JSON patch operations");
            ObjectNode patch = (ObjectNode) doc;
            if (patch.path("$patch").asText().equals("delete")) {
                List<ObjectNode> gone = targetKind == null ? List.of(rendered.get(id(patch)))
                        : ofKind(rendered, targetKind, where);
                require(!gone.contains(null), where + ": patch target " + id(patch) + " not found");
                gone.forEach(d -> rendered.remove(id(d)));
                continue;
            }
            List<ObjectNode> targets = new ArrayList<>();
            if (targetKind == null) {
                ObjectNode t = rendered.get(id(patch));
                require(t != null, where + ": patch target " + id(patch) + " not found");
                targets.add(t);
            } else {
                targets.addAll(ofKind(rendered, targetKind, where));
            }
            for (ObjectNode t : targets) {
                ObjectNode named = patch.deepCopy();
                ((ObjectNode) named.path("metadata")).set("name", t.path("metadata").path("name"));
                merge(t, named, where);
            }
        }
    }

    /** @return the resources of {@code kind}: none is no error (kustomize patches nothing then) */
    private static List<ObjectNode> ofKind(Map<String, ObjectNode> rendered, String kind, String where) {
        return rendered.values().stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
    }

    /** @return the YAML documents of {@code text}, mappings or lists, empty documents dropped */
    private static List<JsonNode> yamlDocuments(String text) {
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = Manifests.YAML.getFactory().createParser(text)) {
            var it = Manifests.YAML.readValues(parser, JsonNode.class);
            while (it.hasNext()) {
                JsonNode n = it.next();
                if (n != null && !n.isNull() && !n.isMissingNode()) {
                    docs.add(n);
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return docs;
    }

    private static ObjectNode kustomization(Path dir) {
        Path file = dir.resolve("kustomization.yaml");
        require(Files.isRegularFile(file), dir + " has no kustomization.yaml");
        List<ObjectNode> docs = Manifests.documents(file);
        require(docs.size() == 1, file + ": expected one document");
        return docs.get(0);
    }

    private static void add(Map<String, ObjectNode> out, ObjectNode d, Path file) {
        require(out.put(id(d), d) == null, file + ": resource " + id(d) + " is defined twice");
    }

    /** Replacements may rename resources: key them by their final names. */
    private static Map<String, ObjectNode> rekeyed(Map<String, ObjectNode> in) {
        Map<String, ObjectNode> out = new LinkedHashMap<>();
        in.values().forEach(d -> require(out.put(id(d), d) == null, "two resources render as " + id(d)));
        return out;
    }

    /**
     * A ConfigMap whose keys are the files' names and values their contents, or the given literals; the name has no
     * hash suffix.
     */
    private static ObjectNode generateConfigMap(Path dir, JsonNode g, Path file) {
        g.fieldNames().forEachRemaining(f -> require(Set.of("name", "files", "literals", "behavior", "options")
                .contains(f), file + ": configMapGenerator field '" + f + "' is outside the supported subset (name, "
                + "files, literals, behavior, options)"));
        require(Set.of("create", "merge").contains(g.path("behavior").asText("create")), file + ": behavior");
        ObjectNode cm = generated("ConfigMap", g, file);
        ObjectNode data = cm.putObject("data");
        for (JsonNode f : g.path("files")) {
            require(!f.asText().contains("="), file + ": key=path file entries are outside the supported subset");
            Path p = dir.resolve(f.asText()).normalize();
            data.put(p.getFileName().toString(), read(p));
        }
        for (JsonNode l : g.path("literals")) {
            String kv = l.asText();
            require(kv.indexOf('=') > 0, file + ": a literal is KEY=VALUE: " + kv);
            data.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        return cm;
    }

    /** A Secret (type Opaque) from env files: each KEY=VALUE line a key, its value base64-encoded. */
    private static ObjectNode generateSecret(Path dir, JsonNode g, Path file) {
        g.fieldNames().forEachRemaining(f -> require(Set.of("name", "envs", "options").contains(f), file
                + ": secretGenerator field '" + f + "' is outside the supported subset (name, envs, options)"));
        ObjectNode secret = generated("Secret", g, file);
        ObjectNode data = secret.putObject("data");
        for (JsonNode env : g.path("envs")) {
            Path p = dir.resolve(env.asText()).normalize();
            require(Files.isRegularFile(p), file + ": the secret's env file " + p + " is missing; make it as "
                    + "k8s-manifests/secret/kustomization.yaml says");
            for (String line : read(p).split("\n")) {
                String kv = line.strip();
                if (kv.isEmpty() || kv.startsWith("#")) {
                    continue;
                }
                require(kv.indexOf('=') > 0, p + ": not a KEY=VALUE line");
                data.put(kv.substring(0, kv.indexOf('=')), java.util.Base64.getEncoder().encodeToString(
                        kv.substring(kv.indexOf('=') + 1).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            }
        }
        secret.put("type", "Opaque");
        return secret;
    }

    /** The generated resource's apiVersion, kind and metadata, its options checked. */
    private static ObjectNode generated(String kind, JsonNode g, Path file) {
        JsonNode options = g.path("options");
        options.fieldNames().forEachRemaining(f -> require(Set.of("disableNameSuffixHash", "labels").contains(f),
                file + ": generator option '" + f + "' is outside the supported subset"));
        require(options.path("disableNameSuffixHash").asBoolean(false), file
                + ": a generator needs disableNameSuffixHash: true here (MiniKustomize does not compute hashes)");
        ObjectNode r = Manifests.JSON.createObjectNode();
        r.put("apiVersion", "v1");
        r.put("kind", kind);
        ObjectNode meta = r.putObject("metadata");
        meta.put("name", g.path("name").asText());
        if (options.has("labels")) {
            meta.set("labels", options.get("labels").deepCopy());
        }
        return r;
    }

    /** {@code behavior: merge}: the generated data joins the existing ConfigMap of that name. */
    private static void mergeInto(Map<String, ObjectNode> resources, ObjectNode cm, Path file) {
        ObjectNode target = resources.get(id(cm));
        require(target != null, file + ": configMapGenerator merges into " + id(cm) + ", which is not there");
        ObjectNode data = target.has("data") ? (ObjectNode) target.get("data") : target.putObject("data");
        data.setAll((ObjectNode) cm.get("data"));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A component: its resources join, then its patches and replacements run over everything so far. */
    private static Map<String, ObjectNode> applyComponent(Path dir, Map<String, ObjectNode> resources) {
        Path file = dir.resolve("kustomization.yaml");
        ObjectNode c = kustomization(dir);
        c.fieldNames().forEachRemaining(f -> require(SUPPORTED_COMPONENT_KEYS.contains(f), file + ": '" + f
                + "' is outside the subset MiniKustomize renders in a component (" + SUPPORTED_COMPONENT_KEYS + ")"));
        require(c.path("apiVersion").asText().equals("kustomize.config.k8s.io/v1alpha1"), file + ": apiVersion");
        require(c.path("kind").asText().equals("Component"), file + ": kind");
        checkPatches(c, file);
        Map<String, ObjectNode> all = new LinkedHashMap<>(resources);
        addResources(c, dir, file, all);
        return transform(c, dir, file, all);
    }

    static void checkKustomization(ObjectNode k, Path file) {
        k.fieldNames().forEachRemaining(f -> {
            if (!SUPPORTED_KEYS.contains(f)) {
                throw new IllegalArgumentException(file + ": '" + f + "' is outside the subset MiniKustomize renders ("
                        + SUPPORTED_KEYS + "); extend MiniKustomize (and check it against kubectl kustomize)");
            }
        });
        require(k.path("apiVersion").asText().equals("kustomize.config.k8s.io/v1beta1"), file + ": apiVersion");
        require(k.path("kind").asText().equals("Kustomization"), file + ": kind");
        require(k.path("resources").isArray() || k.has("configMapGenerator") || k.has("secretGenerator"),
                file + ": resources must be a list");
        checkPatches(k, file);
    }

    private static void checkPatches(ObjectNode k, Path file) {
        for (JsonNode p : k.path("patches")) {
            Iterator<String> names = p.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                require(n.equals("path") || n.equals("patch") || n.equals("target"), file + ": patch field '" + n
                        + "' is outside the supported subset (path, patch, target)");
            }
            require(p.has("path") != p.has("patch"), file + ": a patch has either a path or an inline patch");
            p.path("target").fieldNames().forEachRemaining(n -> require(n.equals("kind"), file + ": patch target field '"
                    + n + "' is outside the supported subset (kind)"));
        }
    }

    static String id(JsonNode d) {
        return d.path("apiVersion").asText() + "|" + d.path("kind").asText() + "|"
                + d.path("metadata").path("name").asText();
    }

    /** Strategic merge for maps: objects merge key by key, null deletes, scalars replace; lists unsupported. */
    static void merge(ObjectNode target, ObjectNode patch, String where) {
        patch.fields().forEachRemaining(e -> {
            JsonNode v = e.getValue();
            if (v.isArray()) {
                throw new IllegalArgumentException(where + ": list '" + e.getKey() + "' in a patch: strategic merge "
                        + "of lists (merge keys) is outside the subset MiniKustomize renders");
            }
            if (v.isNull()) {
                target.remove(e.getKey());
            } else if (v.isObject() && target.get(e.getKey()) instanceof ObjectNode t) {
                merge(t, (ObjectNode) v, where);
            } else {
                target.set(e.getKey(), v.deepCopy());
            }
        });
    }

    static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
