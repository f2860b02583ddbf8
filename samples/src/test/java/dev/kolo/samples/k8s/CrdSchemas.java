package dev.kolo.samples.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validates objects of custom kinds against the published schemas carried verbatim under
 * {@code src/test/resources/crds/} (see the README there: source, path, commit): a CRD's {@code openAPIV3Schema}
 * (Kueue's LocalQueue, scheduler-plugins' PodGroup) or JobSet's OpenAPI definitions. As the API server with strict
 * field validation: unknown fields, wrong types, missing required fields, values outside an enum, a pattern, a
 * length or a range are errors. The Kubernetes types a schema refers to (JobSet's Job template, every object's
 * metadata) are parsed strictly into the fabric8 model, as the core kinds are ({@link Manifests#parseStrict}).
 * A schema keyword this validator does not implement fails the validation, so nothing is skipped silently; the CEL
 * rules of these schemas are transition rules ({@code self == oldSelf}), which hold on create and are not evaluated.
 */
final class CrdSchemas {
    /** The CRDs, by kind: the single version each serves. */
    private static final Map<String, String> CRDS = Map.of("LocalQueue", "kueue.x-k8s.io_localqueues.yaml",
            "PodGroup", "scheduling.x-k8s.io_podgroups.yaml");
    private static final String JOBSET_SWAGGER = "jobset-swagger.json";
    /** JobSet's OpenAPI refers to the Kubernetes API's definitions by URL; those are fabric8 model classes. */
    private static final Pattern K8S_REF = Pattern.compile(".*#/definitions/io\\.k8s\\.(api|apimachinery\\.pkg\\.apis)"
            + "\\.([a-z0-9]+)\\.(v[0-9a-z]+)\\.([A-Za-z]+)");
    private static final Set<String> KEYWORDS = Set.of("description", "type", "properties", "required", "items",
            "format", "maxLength", "minLength", "pattern", "enum", "default", "minimum", "maxItems", "maxProperties",
            "additionalProperties", "anyOf", "$ref", "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys",
            "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations",
            "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy");

    private CrdSchemas() {
    }

    /** @return whether a schema is carried for {@code kind} */
    static boolean knows(String kind) {
        return CRDS.containsKey(kind) || kind.equals("JobSet");
    }

    /**
     * @return the problems of {@code doc} against its kind's schema, each with its path; empty when it is valid
     * @throws IllegalArgumentException if no schema is carried for its kind or version
     */
    static List<String> problems(JsonNode doc) {
        String kind = doc.path("kind").asText();
        List<String> out = new ArrayList<>();
        if (kind.equals("JobSet")) {
            check(doc.path("apiVersion").asText().equals("jobset.x-k8s.io/v1alpha2"), "apiVersion is "
                    + doc.path("apiVersion").asText() + ", JobSet's schema is jobset.x-k8s.io/v1alpha2", out);
            JsonNode swagger = resource(JOBSET_SWAGGER);
            new Walk(swagger.path("definitions"), out).swagger(doc, swagger.path("definitions")
                    .path("jobset.v1alpha2.JobSet"), kind);
            return out;
        }
        String file = CRDS.get(kind);
        if (file == null) {
            throw new IllegalArgumentException("no schema carried for kind " + kind);
        }
        JsonNode crd = resource(file);
        String group = crd.path("spec").path("group").asText();
        JsonNode version = crd.path("spec").path("versions").get(0);
        check(doc.path("apiVersion").asText().equals(group + "/" + version.path("name").asText()), "apiVersion is "
                + doc.path("apiVersion").asText() + ", the CRD serves " + group + "/" + version.path("name").asText(),
                out);
        new Walk(null, out).crd(doc, version.path("schema").path("openAPIV3Schema"), kind, true);
        return out;
    }

    /**
     * @return the problems of {@code v} against JobSet's definition {@code definition} (e.g. the JobSetSpec a Trainer
     *     runtime's template holds), each path starting with {@code path}
     */
    static List<String> jobSetProblems(JsonNode v, String definition, String path) {
        JsonNode defs = resource(JOBSET_SWAGGER).path("definitions");
        List<String> out = new ArrayList<>();
        new Walk(defs, out).swagger(v, defs.path(definition), path);
        return out;
    }

    /** @return the problems of {@code v} as the Kubernetes type {@code className} (a fabric8 model class) */
    static List<String> kubernetesProblems(JsonNode v, String className, String path) {
        List<String> out = new ArrayList<>();
        new Walk(null, out).strict(v, className, path);
        return out;
    }

    /** @return the parsed schema resource {@code name} (YAML or JSON) */
    static JsonNode resource(String name) {
        try (InputStream in = CrdSchemas.class.getResourceAsStream("/crds/" + name)) {
            if (in == null) {
                throw new IllegalStateException("test resource crds/" + name + " is missing");
            }
            return Manifests.YAML.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void check(boolean ok, String problem, List<String> out) {
        if (!ok) {
            out.add(problem);
        }
    }

    /** One validation: walks the document and its schema together, collecting problems. */
    private record Walk(JsonNode definitions, List<String> out) {
        void crd(JsonNode v, JsonNode schema, String path, boolean root) {
            schema.fieldNames().forEachRemaining(k -> check(KEYWORDS.contains(k), path + ": schema keyword '" + k
                    + "' is not implemented here", out));
            for (JsonNode rule : schema.path("x-kubernetes-validations")) {
                check(rule.path("rule").asText().equals("self == oldSelf"), path + ": CEL rule '"
                        + rule.path("rule").asText() + "' is not evaluated here", out);
            }
            if (!common(v, schema, path)) {
                return;
            }
            if (v.isObject()) {
                JsonNode props = schema.path("properties");
                JsonNode extra = schema.path("additionalProperties");
                v.fields().forEachRemaining(e -> {
                    String at = path + "." + e.getKey();
                    if (root && e.getKey().equals("metadata")) {
                        strict(e.getValue(), "io.fabric8.kubernetes.api.model.ObjectMeta", at);
                    } else if (props.has(e.getKey())) {
                        crd(e.getValue(), props.get(e.getKey()), at, false);
                    } else if (extra.isObject()) {
                        crd(e.getValue(), extra, at, false);
                    } else {
                        out.add(at + ": unknown field");
                    }
                });
                schema.path("required").forEach(r -> check(v.has(r.asText()), path + ": lacks required field '"
                        + r.asText() + "'", out));
                check(!schema.has("maxProperties") || v.size() <= schema.path("maxProperties").asInt(), path
                        + ": more than " + schema.path("maxProperties") + " fields", out);
            } else if (v.isArray()) {
                int i = 0;
                for (JsonNode item : v) {
                    crd(item, schema.path("items"), path + "[" + i++ + "]", false);
                }
            }
        }

        void swagger(JsonNode v, JsonNode schema, String path) {
            schema.fieldNames().forEachRemaining(k -> check(KEYWORDS.contains(k), path + ": schema keyword '" + k
                    + "' is not implemented here", out));
            if (schema.has("$ref")) {
                String ref = schema.path("$ref").asText();
                if (ref.startsWith("#/definitions/")) {
                    swagger(v, definitions.path(ref.substring("#/definitions/".length())), path);
                } else {
                    var m = K8S_REF.matcher(ref);
                    check(m.matches(), path + ": reference " + ref + " is not a Kubernetes definition", out);
                    if (m.matches()) {
                        strict(v, fabric8Class(m.group(2), m.group(4)), path);
                    }
                }
                return;
            }
            if (!common(v, schema, path)) {
                return;
            }
            if (v.isObject()) {
                JsonNode props = schema.path("properties");
                v.fields().forEachRemaining(e -> {
                    if (props.has(e.getKey())) {
                        swagger(e.getValue(), props.get(e.getKey()), path + "." + e.getKey());
                    } else {
                        out.add(path + "." + e.getKey() + ": unknown field");
                    }
                });
                schema.path("required").forEach(r -> check(v.has(r.asText()), path + ": lacks required field '"
                        + r.asText() + "'", out));
            } else if (v.isArray()) {
                int i = 0;
                for (JsonNode item : v) {
                    swagger(item, schema.path("items"), path + "[" + i++ + "]");
                }
            }
        }

        /** Type, format, enum, pattern, lengths, ranges. @return whether to descend (the type matched) */
        private boolean common(JsonNode v, JsonNode schema, String path) {
            String type = schema.path("type").asText("");
            if (schema.path("x-kubernetes-int-or-string").asBoolean(false)) {
                check(v.isIntegralNumber() || v.isTextual(), path + ": an integer or a string", out);
                if (v.isTextual() && schema.has("pattern")) {
                    check(Pattern.compile(schema.path("pattern").asText()).matcher(v.asText()).find(), path + ": '"
                            + v.asText() + "' does not match " + schema.path("pattern").asText(), out);
                }
                return false;
            }
            boolean ok = switch (type) {
                case "object" -> v.isObject();
                case "array" -> v.isArray();
                case "string" -> v.isTextual();
                case "integer" -> v.isIntegralNumber();
                case "number" -> v.isNumber();
                case "boolean" -> v.isBoolean();
                case "" -> true;
                default -> false;
            };
            check(ok, path + ": not of type " + type + ": " + v, out);
            if (!ok) {
                return false;
            }
            if (v.isIntegralNumber()) {
                String format = schema.path("format").asText("");
                long n = v.asLong();
                check(!format.equals("int32") || n == (int) n, path + ": " + n + " is not an int32", out);
                check(!schema.has("minimum") || n >= schema.path("minimum").asLong(), path + ": below "
                        + schema.path("minimum"), out);
            }
            if (v.isTextual()) {
                String s = v.asText();
                check(!schema.has("maxLength") || s.length() <= schema.path("maxLength").asInt(), path
                        + ": longer than " + schema.path("maxLength"), out);
                check(!schema.has("minLength") || s.length() >= schema.path("minLength").asInt(), path
                        + ": shorter than " + schema.path("minLength"), out);
                check(!schema.has("pattern") || Pattern.compile(schema.path("pattern").asText()).matcher(s).find(),
                        path + ": '" + s + "' does not match " + schema.path("pattern").asText(), out);
            }
            if (schema.has("enum")) {
                boolean listed = false;
                for (JsonNode e : schema.path("enum")) {
                    listed |= e.equals(v);
                }
                check(listed, path + ": " + v + " is not one of " + schema.path("enum"), out);
            }
            check(!schema.has("maxItems") || v.size() <= schema.path("maxItems").asInt(), path + ": more than "
                    + schema.path("maxItems") + " items", out);
            return true;
        }

        /** A Kubernetes type: parsed strictly into its fabric8 model class, no field unknown, nothing dropped. */
        private void strict(JsonNode v, String className, String path) {
            try {
                Class<?> type = Class.forName(className);
                Object parsed = Manifests.SERIALIZATION.unmarshal(Manifests.JSON.writeValueAsString(v),
                        type.asSubclass(KubernetesResource.class));
                List<String> unknown = new ArrayList<>();
                Manifests.collectUnknownFields(parsed, path, unknown, 0);
                unknown.forEach(u -> out.add(u + ": unknown field"));
                JsonNode back = Manifests.JSON.valueToTree(parsed);
                check(Manifests.normalize(v).equals(Manifests.normalize(back)), path + ": the " + type.getSimpleName()
                        + " model does not hold its content exactly", out);
            } catch (ClassNotFoundException | IOException | RuntimeException e) {
                out.add(path + ": not a " + className + ": " + e.getMessage());
            }
        }
    }

    /** @return the fabric8 model class of a Kubernetes API definition (group as in io.k8s.api.GROUP.VERSION) */
    static String fabric8Class(String group, String kind) {
        String pkg = switch (group) {
            case "core", "meta" -> "io.fabric8.kubernetes.api.model";
            case "batch" -> "io.fabric8.kubernetes.api.model.batch.v1";
            default -> throw new IllegalArgumentException("no fabric8 package known for API group " + group);
        };
        return pkg + "." + kind;
    }
}
