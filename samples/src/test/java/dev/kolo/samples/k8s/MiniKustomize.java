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
 * {@code configMapGenerator} from files with a fixed name; {@code components} whose {@code replacements} copy a
 * value, whole or as one delimiter-separated part, into fields of selected resources; and {@code patches}, each
 * a file ({@code path}) or inline ({@code patch}), optionally with a {@code target} kind, holding either a
 * strategic-merge patch of maps only (for maps, strategic merge and JSON merge agree) or a JSON patch (a list of
 * operations, with a {@code target}; {@link JsonPatch} lists the operations). Steps run in kustomize's order:
 * resources, generators, components, patches. Anything else is rejected, so an overlay that grows past this
 * subset fails the tests rather than being rendered wrongly; where kubectl is installed, {@link KustomizeTest}
 * also checks this renderer against {@code kubectl kustomize}.
 */
final class MiniKustomize {
    static final Set<String> SUPPORTED_KEYS = Set.of("apiVersion", "kind", "resources", "patches", "components",
            "configMapGenerator");
    static final Set<String> SUPPORTED_COMPONENT_KEYS = Set.of("apiVersion", "kind", "replacements");

    private MiniKustomize() {
    }

    /** @return the rendered resources of the kustomization in {@code dir}, keyed by apiVersion|kind|name */
    static Map<String, ObjectNode> render(Path dir) {
        Path file = dir.resolve("kustomization.yaml");
        ObjectNode k = kustomization(dir);
        checkKustomization(k, file);
        Map<String, ObjectNode> accumulated = new LinkedHashMap<>();
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
        for (JsonNode g : k.path("configMapGenerator")) {
            add(accumulated, generateConfigMap(dir, g, file), file);
        }
        for (JsonNode c : k.path("components")) {
            applyComponent(dir.resolve(c.asText()).normalize(), accumulated);
        }
        Map<String, ObjectNode> rendered = rekeyed(accumulated);
        for (JsonNode patchRef : k.path("patches")) {
            patch(rendered, patchRef, dir, file);
        }
        return rendered;
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

    private static List<ObjectNode> ofKind(Map<String, ObjectNode> rendered, String kind, String where) {
        List<ObjectNode> out = rendered.values().stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
        require(!out.isEmpty(), where + ": no resource of kind " + kind + " to patch");
        return out;
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

    /** A ConfigMap whose keys are the files' names and values their contents; the name has no hash suffix. */
    private static ObjectNode generateConfigMap(Path dir, JsonNode g, Path file) {
        g.fieldNames().forEachRemaining(f -> require(Set.of("name", "files", "options").contains(f),
                file + ": configMapGenerator field '" + f + "' is outside the supported subset (name, files, options)"));
        JsonNode options = g.path("options");
        options.fieldNames().forEachRemaining(f -> require(Set.of("disableNameSuffixHash", "labels").contains(f),
                file + ": configMapGenerator option '" + f + "' is outside the supported subset"));
        require(options.path("disableNameSuffixHash").asBoolean(false), file
                + ": configMapGenerator needs disableNameSuffixHash: true here (MiniKustomize does not compute hashes)");
        ObjectNode cm = Manifests.JSON.createObjectNode();
        cm.put("apiVersion", "v1");
        cm.put("kind", "ConfigMap");
        ObjectNode meta = cm.putObject("metadata");
        meta.put("name", g.path("name").asText());
        if (options.has("labels")) {
            meta.set("labels", options.get("labels").deepCopy());
        }
        ObjectNode data = cm.putObject("data");
        for (JsonNode f : g.path("files")) {
            require(!f.asText().contains("="), file + ": key=path file entries are outside the supported subset");
            Path p = dir.resolve(f.asText()).normalize();
            try {
                data.put(p.getFileName().toString(), Files.readString(p));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return cm;
    }

    private static void applyComponent(Path dir, Map<String, ObjectNode> resources) {
        Path file = dir.resolve("kustomization.yaml");
        ObjectNode c = kustomization(dir);
        c.fieldNames().forEachRemaining(f -> require(SUPPORTED_COMPONENT_KEYS.contains(f), file + ": '" + f
                + "' is outside the subset MiniKustomize renders in a component (" + SUPPORTED_COMPONENT_KEYS + ")"));
        require(c.path("apiVersion").asText().equals("kustomize.config.k8s.io/v1alpha1"), file + ": apiVersion");
        require(c.path("kind").asText().equals("Component"), file + ": kind");
        for (JsonNode r : c.path("replacements")) {
            replace(r, resources.values(), file);
        }
    }

    /** One replacement: the source's value, read once, into every field path of every selected resource. */
    private static void replace(JsonNode r, java.util.Collection<ObjectNode> resources, Path file) {
        JsonNode src = r.path("source");
        src.fieldNames().forEachRemaining(f -> require(Set.of("kind", "name", "fieldPath").contains(f),
                file + ": replacement source field '" + f + "' is outside the supported subset"));
        List<ObjectNode> sources = resources.stream().filter(d -> d.path("kind").asText().equals(src.path("kind")
                .asText()) && d.path("metadata").path("name").asText().equals(src.path("name").asText())).toList();
        require(sources.size() == 1, file + ": replacement source " + src + " matches " + sources.size()
                + " resources");
        List<JsonNode> found = find(sources.get(0), src.path("fieldPath").asText());
        require(found.size() == 1 && found.get(0).isValueNode(), file + ": replacement source " + src
                + " is not one value");
        String value = found.get(0).asText();
        for (JsonNode t : r.path("targets")) {
            JsonNode select = t.path("select");
            select.fieldNames().forEachRemaining(f -> require(f.equals("kind"), file + ": select field '" + f
                    + "' is outside the supported subset (kind)"));
            JsonNode options = t.path("options");
            options.fieldNames().forEachRemaining(f -> require(Set.of("delimiter", "index").contains(f),
                    file + ": replacement option '" + f + "' is outside the supported subset"));
            for (ObjectNode d : resources) {
                if (select.has("kind") && !d.path("kind").asText().equals(select.path("kind").asText())) {
                    continue;
                }
                for (JsonNode fp : t.path("fieldPaths")) {
                    replaceAt(d, fp.asText(), value, options, file);
                }
            }
        }
    }

    private static void replaceAt(ObjectNode d, String fieldPath, String value, JsonNode options, Path file) {
        List<String> segments = segments(fieldPath);
        List<JsonNode> parents = find(d, String.join(".", segments.subList(0, segments.size() - 1)));
        String last = segments.get(segments.size() - 1);
        require(!parents.isEmpty(), file + ": unable to find field \"" + fieldPath + "\" in " + id(d));
        for (JsonNode parent : parents) {
            String key = last.startsWith("[") ? last.substring(1, last.length() - 1) : last;
            require(parent instanceof ObjectNode && parent.has(key) && parent.get(key).isValueNode(),
                    file + ": unable to find field \"" + fieldPath + "\" in " + id(d));
            ObjectNode map = (ObjectNode) parent;
            JsonNode old = map.get(key);
            String replaced = value;
            if (options.has("delimiter")) {
                String delimiter = options.get("delimiter").asText();
                String[] parts = old.asText().split(java.util.regex.Pattern.quote(delimiter), -1);
                int index = options.path("index").asInt(0);
                require(index >= 0 && index < parts.length, file + ": index " + index + " outside '" + old.asText()
                        + "'");
                parts[index] = value;
                replaced = String.join(delimiter, parts);
            }
            if (old.isIntegralNumber()) {
                map.put(key, Integer.parseInt(replaced));
            } else {
                map.put(key, replaced);
            }
        }
    }

    /** @return the nodes at a kustomize field path: keys, {@code [key.with.dots]}, indexes, {@code [field=value]} */
    private static List<JsonNode> find(JsonNode root, String fieldPath) {
        List<JsonNode> at = List.of(root);
        for (String s : fieldPath.isEmpty() ? List.<String>of() : segments(fieldPath)) {
            List<JsonNode> next = new ArrayList<>();
            for (JsonNode n : at) {
                if (s.startsWith("[") && s.contains("=")) {
                    String field = s.substring(1, s.indexOf('='));
                    String wanted = s.substring(s.indexOf('=') + 1, s.length() - 1);
                    n.forEach(e -> {
                        if (n.isArray() && e.path(field).asText().equals(wanted)) {
                            next.add(e);
                        }
                    });
                } else if (n.isArray() && s.chars().allMatch(Character::isDigit)) {
                    if (n.has(Integer.parseInt(s))) {
                        next.add(n.get(Integer.parseInt(s)));
                    }
                } else {
                    String key = s.startsWith("[") ? s.substring(1, s.length() - 1) : s;
                    if (n.isObject() && n.has(key)) {
                        next.add(n.get(key));
                    }
                }
            }
            at = next;
        }
        return at;
    }

    /** Splits at dots outside brackets. */
    private static List<String> segments(String fieldPath) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int depth = 0;
        for (char c : fieldPath.toCharArray()) {
            if (c == '.' && depth == 0) {
                out.add(cur.toString());
                cur.setLength(0);
                continue;
            }
            depth += c == '[' ? 1 : c == ']' ? -1 : 0;
            cur.append(c);
        }
        out.add(cur.toString());
        return out;
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
        require(k.path("resources").isArray() || k.has("configMapGenerator"), file + ": resources must be a list");
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

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
