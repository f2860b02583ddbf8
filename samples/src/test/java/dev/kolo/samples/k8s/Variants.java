package dev.kolo.samples.k8s;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Copies of k8s-manifests/ changed as a user changes them: components listed by an overlay (Kueue, the gang), the
 * program of components/program, a setting of base/configmap.yaml. The tests render them with MiniKustomize and
 * {@link KustomizeTest} with the real kustomize too.
 */
final class Variants {
    /** What {@link #program} writes: a user's own image, command and arguments. */
    static final String IMAGE = "registry.example.com/team/fashion-mnist-djl:1.2.0";
    static final List<String> COMMAND = List.of("java", "-jar", "/app/fashion-mnist-djl.jar");
    static final List<String> ARGS = List.of("--epochs", "2");

    private Variants() {
    }

    /** @return a renderable copy of k8s-manifests/ in {@code tmp} */
    static Path copy(Path tmp) throws IOException {
        return Manifests.copyTree(Manifests.manifestsDir(), tmp.resolve("k8s-manifests"));
    }

    /** Lists {@code components} (names under components/) in the kustomization at {@code dir}, after its own. */
    static void withComponents(Path manifests, String dir, String... components) throws IOException {
        Path k = manifests.resolve(dir).resolve("kustomization.yaml");
        String text = Files.readString(k);
        String up = "../".repeat(dir.split("/").length);
        StringBuilder add = new StringBuilder();
        for (String c : components) {
            add.append("  - ").append(up).append("components/").append(c).append('\n');
        }
        int at = text.indexOf("components:\n");
        if (at < 0) {
            text = text + "components:\n" + add;
        } else {
            int end = at + "components:\n".length();
            while (text.startsWith("  - ", end)) {
                end = text.indexOf('\n', end) + 1;
            }
            text = text.substring(0, end) + add + text.substring(end);
        }
        Files.writeString(k, text);
    }

    /** Writes components/program/program.yaml as a user does for a program of their own ({@link #IMAGE}...). */
    static void program(Path manifests) throws IOException {
        Path p = manifests.resolve("components/program/program.yaml");
        String text = Files.readString(p);
        int spec = text.indexOf("spec:\n");
        StringBuilder b = new StringBuilder(text.substring(0, spec)).append("spec:\n  containers:\n")
                .append("    - name: worker\n      image: ").append(IMAGE).append("\n      command:\n");
        COMMAND.forEach(c -> b.append("        - ").append(c).append('\n'));
        b.append("      args:\n");
        ARGS.forEach(a -> b.append("        - \"").append(a).append("\"\n"));
        Files.writeString(p, b.toString());
    }

    /** Sets {@code key} in base/configmap.yaml to {@code value}. */
    static void setting(Path manifests, String key, String value) throws IOException {
        Path cm = manifests.resolve("base/configmap.yaml");
        String text = Files.readString(cm);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^  " + key + ": .*$").matcher(text);
        if (!m.find()) {
            throw new AssertionError("base/configmap.yaml has no " + key);
        }
        Files.writeString(cm, m.replaceFirst("  " + key + ": \"" + value + "\""));
    }
}
