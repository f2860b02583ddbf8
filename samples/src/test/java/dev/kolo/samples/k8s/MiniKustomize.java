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
 * kustomize: {@code resources} (files and kustomization folders) and {@code patches} given by {@code path}
 * whose content is a strategic-merge patch of maps only (for maps, strategic merge and JSON merge agree).
 * Anything else is rejected, so an overlay that grows past this subset fails the tests rather than being
 * rendered wrongly; where kubectl is installed, {@link KustomizeTest} also checks this renderer against
 * {@code kubectl kustomize}.
 */
final class MiniKustomize {
    static final Set<String> SUPPORTED_KEYS = Set.of("apiVersion", "kind", "resources", "patches");

    private MiniKustomize() {
    }

    /** @return the rendered resources of the kustomization in {@code dir}, keyed by apiVersion|kind|name */
    static Map<String, ObjectNode> render(Path dir) {
        Path file = dir.resolve("kustomization.yaml");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(dir + " has no kustomization.yaml");
        }
        List<ObjectNode> docs = Manifests.documents(file);
        if (docs.size() != 1) {
            throw new IllegalArgumentException(file + ": expected one document");
        }
        ObjectNode k = docs.get(0);
        checkKustomization(k, file);
        Map<String, ObjectNode> out = new LinkedHashMap<>();
        for (JsonNode r : k.path("resources")) {
            Path p = dir.resolve(r.asText()).normalize();
            List<ObjectNode> loaded = new ArrayList<>();
            if (Files.isDirectory(p)) {
                loaded.addAll(render(p).values());
            } else {
                loaded.addAll(Manifests.documents(p));
            }
            for (ObjectNode d : loaded) {
                String id = id(d);
                if (out.put(id, d) != null) {
                    throw new IllegalArgumentException(file + ": resource " + id + " is defined twice");
                }
            }
        }
        for (JsonNode patchRef : k.path("patches")) {
            Path p = dir.resolve(patchRef.path("path").asText()).normalize();
            for (ObjectNode patch : Manifests.documents(p)) {
                ObjectNode target = out.get(id(patch));
                if (target == null) {
                    throw new IllegalArgumentException(p + ": patch target " + id(patch) + " not found");
                }
                merge(target, patch, p.toString());
            }
        }
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
        require(k.path("resources").isArray(), file + ": resources must be a list");
        for (JsonNode p : k.path("patches")) {
            Iterator<String> names = p.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                require(n.equals("path"), file + ": patch field '" + n + "' is outside the supported subset (path)");
            }
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
