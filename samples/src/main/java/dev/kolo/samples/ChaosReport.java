package dev.kolo.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The suite's results as a table (scenario | result | seconds | detail) or as JSON lines. */
final class ChaosReport {
    /** One scenario's outcome. */
    record Result(String scenario, boolean pass, double seconds, String detail) {
    }

    private final List<Result> results = new ArrayList<>();

    void add(Result r) {
        results.add(r);
    }

    List<Result> results() {
        return List.copyOf(results);
    }

    boolean allPassed() {
        return !results.isEmpty() && results.stream().allMatch(Result::pass);
    }

    static String header() {
        return String.format(Locale.ROOT, "| %-24s | %-6s | %7s | %s", "scenario", "result", "seconds", "detail");
    }

    static String row(Result r) {
        return String.format(Locale.ROOT, "| %-24s | %-6s | %7.1f | %s", r.scenario(), r.pass() ? "PASS" : "FAIL",
                r.seconds(), oneLine(r.detail()));
    }

    /** {@code {"bench":"chaos","scenario":S,"result":"pass"|"fail","seconds":T,"detail":D}}. */
    static String json(Result r) {
        return String.format(Locale.ROOT, "{\"bench\":\"chaos\",\"scenario\":\"%s\",\"result\":\"%s\",\"seconds\":%.1f,"
                + "\"detail\":\"%s\"}", escape(r.scenario()), r.pass() ? "pass" : "fail", r.seconds(),
                escape(oneLine(r.detail())));
    }

    String summary() {
        long failed = results.stream().filter(r -> !r.pass()).count();
        return "bench chaos: " + (results.size() - failed) + " of " + results.size() + " scenarios passed"
                + (failed == 0 ? "" : "; failed: " + String.join(", ", results.stream().filter(r -> !r.pass())
                        .map(Result::scenario).toList()));
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*[\\r\\n]+\\s*", " / ");
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
