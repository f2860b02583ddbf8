package dev.kolo.samples.k8s;

import static dev.kolo.samples.k8s.MiniKustomize.require;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * Kustomize's {@code replacements}, the subset k8s-manifests/ uses, for {@link MiniKustomize}: a source resource
 * selected by kind (and name, or the one resource of that kind), a value at a field path (a scalar, or a list or map
 * copied whole), written into field paths of the resources each target selects by kind; a target kind that selects
 * nothing changes nothing. Options: {@code delimiter} and {@code index} replace one part of a delimited string;
 * {@code create} makes a missing field (and its missing parents). A scalar written over an integer stays an
 * integer and over a string a string, as kustomize keeps the target's type. Field paths: keys, {@code [key.with.dots]},
 * list indexes and {@code [field=value]} list selectors.
 */
final class Replacements {
    private Replacements() {
    }

    /** One replacement: the source's value, read once, into every field path of every selected resource. */
    static void apply(JsonNode r, Collection<ObjectNode> resources, Path file) {
        JsonNode src = r.path("source");
        src.fieldNames().forEachRemaining(f -> require(Set.of("kind", "name", "fieldPath").contains(f),
                file + ": replacement source field '" + f + "' is outside the supported subset"));
        List<ObjectNode> sources = resources.stream().filter(d -> selects(src, d)).toList();
        require(sources.size() == 1, file + ": replacement source " + src + " matches " + sources.size()
                + " resources");
        List<JsonNode> found = find(sources.get(0), src.path("fieldPath").asText());
        require(found.size() == 1, file + ": fieldPath `" + src.path("fieldPath").asText() + "` is missing for "
                + "replacement source " + src);
        JsonNode value = found.get(0);
        for (JsonNode t : r.path("targets")) {
            JsonNode select = t.path("select");
            select.fieldNames().forEachRemaining(f -> require(Set.of("kind", "name").contains(f), file
                    + ": select field '" + f + "' is outside the supported subset (kind, name)"));
            JsonNode options = t.path("options");
            options.fieldNames().forEachRemaining(f -> require(Set.of("delimiter", "index", "create").contains(f),
                    file + ": replacement option '" + f + "' is outside the supported subset"));
            for (ObjectNode d : resources) {
                if (selects(select, d)) {
                    for (JsonNode fp : t.path("fieldPaths")) {
                        replaceAt(d, fp.asText(), value, options, file);
                    }
                }
            }
        }
    }

    private static boolean selects(JsonNode select, JsonNode d) {
        return (!select.has("kind") || d.path("kind").asText().equals(select.path("kind").asText()))
                && (!select.has("name") || d.path("metadata").path("name").asText().equals(select.path("name")
                        .asText()));
    }

    private static void replaceAt(ObjectNode d, String fieldPath, JsonNode value, JsonNode options, Path file) {
        List<String> segments = segments(fieldPath);
        String parentPath = String.join(".", segments.subList(0, segments.size() - 1));
        boolean create = options.path("create").asBoolean(false);
        List<JsonNode> parents = create ? List.of(createPath(d, segments.subList(0, segments.size() - 1), fieldPath,
                file)) : find(d, parentPath);
        String last = segments.get(segments.size() - 1);
        String key = last.startsWith("[") ? last.substring(1, last.length() - 1) : last;
        require(!parents.isEmpty(), file + ": unable to find field \"" + fieldPath + "\" in " + MiniKustomize.id(d));
        for (JsonNode parent : parents) {
            require(parent instanceof ObjectNode && (create || parent.has(key)), file + ": unable to find field \""
                    + fieldPath + "\" in " + MiniKustomize.id(d));
            ObjectNode map = (ObjectNode) parent;
            JsonNode old = map.get(key);
            if (!value.isValueNode()) {
                require(!options.has("delimiter"), file + ": a delimiter needs a scalar source");
                map.set(key, value.deepCopy());
                continue;
            }
            String replaced = value.asText();
            if (options.has("delimiter")) {
                require(old != null && old.isValueNode(), file + ": a delimiter needs a scalar at " + fieldPath);
                String delimiter = options.get("delimiter").asText();
                String[] parts = old.asText().split(java.util.regex.Pattern.quote(delimiter), -1);
                int index = options.path("index").asInt(0);
                require(index >= 0 && index < parts.length, file + ": index " + index + " outside '" + old.asText()
                        + "'");
                parts[index] = replaced;
                replaced = String.join(delimiter, parts);
            }
            if (old == null) {
                map.set(key, value.deepCopy());
            } else if (old.isIntegralNumber()) {
                map.put(key, Integer.parseInt(replaced));
            } else {
                require(old.isTextual(), file + ": " + fieldPath + " is not a string or an integer");
                map.put(key, replaced);
            }
        }
    }

    /** With {@code create}: the parent of the field, made where missing (maps only, and existing list items). */
    private static JsonNode createPath(ObjectNode d, List<String> segments, String fieldPath, Path file) {
        JsonNode at = d;
        for (String s : segments) {
            List<JsonNode> next = find(at, s);
            if (next.isEmpty()) {
                require(at instanceof ObjectNode && !s.contains("="), file + ": cannot create \"" + fieldPath
                        + "\" in " + MiniKustomize.id(d));
                String key = s.startsWith("[") ? s.substring(1, s.length() - 1) : s;
                at = ((ObjectNode) at).putObject(key);
            } else {
                require(next.size() == 1, file + ": \"" + fieldPath + "\" selects several fields");
                at = next.get(0);
            }
        }
        return at;
    }

    /** @return the nodes at a kustomize field path: keys, {@code [key.with.dots]}, indexes, {@code [field=value]} */
    static List<JsonNode> find(JsonNode root, String fieldPath) {
        List<JsonNode> at = List.of(root);
        for (String s : fieldPath.isEmpty() ? List.<String>of() : segments(fieldPath)) {
            List<JsonNode> next = new ArrayList<>();
            for (JsonNode n : at) {
                if (s.startsWith("[") && s.contains("=")) {
                    String field = s.substring(1, s.indexOf('='));
                    String wanted = s.substring(s.indexOf('=') + 1, s.length() - 1);
                    if (n instanceof ArrayNode a) {
                        a.forEach(e -> {
                            if (e.path(field).asText().equals(wanted)) {
                                next.add(e);
                            }
                        });
                    }
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
    static List<String> segments(String fieldPath) {
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
}
