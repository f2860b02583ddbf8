package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * JSON Patch (RFC 6902) as kustomize applies it, for {@link MiniKustomize}: the operations {@code add},
 * {@code remove}, {@code replace}, {@code copy} and {@code test}, on JSON Pointers (RFC 6901, with {@code ~0}
 * and {@code ~1} escapes). Array positions are indexes from 0, and {@code -} (the end) for {@code add} and the
 * target of {@code copy}. As in kustomize, the parent of an added value must exist, a removed or replaced value
 * must exist, and a failed {@code test} fails the patch. Anything else ({@code move}, negative indexes, the
 * whole document as path, unknown fields) is rejected.
 */
final class JsonPatch {
    /** The fields each operation takes. */
    static final Map<String, Set<String>> OPERATIONS = Map.of("add", Set.of("op", "path", "value"),
            "remove", Set.of("op", "path"), "replace", Set.of("op", "path", "value"),
            "copy", Set.of("op", "from", "path"), "test", Set.of("op", "path", "value"));

    private JsonPatch() {
    }

    /** Applies {@code ops}, a list of operations, to {@code doc} in place; {@code where} names the patch. */
    static void apply(ObjectNode doc, JsonNode ops, String where) {
        require(ops.isArray(), where + ": a JSON patch is a list of operations");
        for (JsonNode op : ops) {
            String name = op.path("op").asText();
            Set<String> fields = OPERATIONS.get(name);
            require(fields != null, where + ": JSON patch op '" + name + "' is outside the subset MiniKustomize "
                    + "renders " + OPERATIONS.keySet());
            op.fieldNames().forEachRemaining(f -> require(fields.contains(f), where + ": field '" + f + "' in op "
                    + name));
            fields.forEach(f -> require(op.has(f), where + ": op " + name + " lacks '" + f + "'"));
            String path = op.path("path").asText();
            String at = where + ": " + name + " " + path;
            switch (name) {
                case "add" -> add(doc, path, op.get("value").deepCopy(), at);
                case "remove" -> remove(doc, path, at);
                case "replace" -> replace(doc, path, op.get("value").deepCopy(), at);
                case "copy" -> add(doc, path, get(doc, op.path("from").asText(), at).deepCopy(), at);
                case "test" -> require(get(doc, path, at).equals(op.get("value")), at + ": test failed, found "
                        + get(doc, path, at) + ", expected " + op.get("value"));
                default -> throw new IllegalStateException(name);
            }
        }
    }

    private static void add(JsonNode doc, String pointer, JsonNode value, String at) {
        List<String> tokens = tokens(pointer, at);
        JsonNode parent = get(doc, tokens.subList(0, tokens.size() - 1), at);
        String last = tokens.get(tokens.size() - 1);
        if (parent instanceof ObjectNode o) {
            o.set(last, value);
        } else if (parent instanceof ArrayNode a) {
            int i = last.equals("-") ? a.size() : index(last, a.size() + 1, at);
            a.insert(i, value);
        } else {
            throw new IllegalArgumentException(at + ": the parent is not an object or a list");
        }
    }

    private static void remove(JsonNode doc, String pointer, String at) {
        List<String> tokens = tokens(pointer, at);
        get(doc, tokens, at); // it must exist
        JsonNode parent = get(doc, tokens.subList(0, tokens.size() - 1), at);
        String last = tokens.get(tokens.size() - 1);
        if (parent instanceof ObjectNode o) {
            o.remove(last);
        } else {
            ((ArrayNode) parent).remove(index(last, parent.size(), at));
        }
    }

    private static void replace(JsonNode doc, String pointer, JsonNode value, String at) {
        List<String> tokens = tokens(pointer, at);
        get(doc, tokens, at); // it must exist
        JsonNode parent = get(doc, tokens.subList(0, tokens.size() - 1), at);
        String last = tokens.get(tokens.size() - 1);
        if (parent instanceof ObjectNode o) {
            o.set(last, value);
        } else {
            ((ArrayNode) parent).set(index(last, parent.size(), at), value);
        }
    }

    private static JsonNode get(JsonNode doc, String pointer, String at) {
        return get(doc, tokens(pointer, at), at);
    }

    private static JsonNode get(JsonNode doc, List<String> tokens, String at) {
        JsonNode n = doc;
        for (String t : tokens) {
            if (n.isObject()) {
                require(n.has(t), at + ": no value at '" + t + "'");
                n = n.get(t);
            } else if (n.isArray()) {
                n = n.get(index(t, n.size(), at));
            } else {
                throw new IllegalArgumentException(at + ": no value at '" + t + "' (inside a scalar)");
            }
        }
        return n;
    }

    /** @return the index {@code t} names, below {@code bound} */
    private static int index(String t, int bound, String at) {
        require(t.matches("0|[1-9][0-9]{0,8}"), at + ": '" + t + "' is not a list index");
        int i = Integer.parseInt(t);
        require(i < bound, at + ": index " + i + " is out of range");
        return i;
    }

    /** @return the unescaped reference tokens of a pointer; the whole document ("") is not a target here */
    private static List<String> tokens(String pointer, String at) {
        require(pointer.startsWith("/"), at + ": a JSON pointer below the document starts with '/'");
        List<String> out = new ArrayList<>();
        for (String t : pointer.substring(1).split("/", -1)) {
            out.add(t.replace("~1", "/").replace("~0", "~"));
        }
        return out;
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
