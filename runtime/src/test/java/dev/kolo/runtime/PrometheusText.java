package dev.kolo.runtime;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A strict-enough reader of the Prometheus text format: every sample line must parse. */
final class PrometheusText {
    private static final Pattern SAMPLE = Pattern.compile(
            "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})?\\s+(-?[0-9.eE+-]+|NaN|[+-]Inf)(\\s+-?[0-9]+)?");

    private PrometheusText() {
    }

    /** @return samples keyed by {@code name{labels}} */
    static Map<String, Double> parse(String text) {
        Map<String, Double> samples = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line.trim());
            if (!m.matches()) {
                throw new AssertionError("not a Prometheus sample line: " + line);
            }
            samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(
                    m.group(3).replace("+Inf", "Infinity").replace("-Inf", "-Infinity")));
        }
        return samples;
    }

    /** Sum of every sample of {@code name} whose labels contain all {@code labels} ({@code k="v"} pieces). */
    static double sum(Map<String, Double> samples, String name, String... labels) {
        double total = 0;
        for (Map.Entry<String, Double> e : samples.entrySet()) {
            String key = e.getKey();
            if (!(key.equals(name) || key.startsWith(name + "{"))) {
                continue;
            }
            boolean all = true;
            for (String l : labels) {
                all &= key.contains(l);
            }
            if (all) {
                total += e.getValue();
            }
        }
        return total;
    }
}
