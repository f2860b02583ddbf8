package dev.kolo.samples.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The suite's results as a table (scenario | result | seconds | detail) or as JSON lines. */
final class ChaosReport {
    /** One scenario's outcome; a skipped scenario (it cannot run here) neither passes nor fails the suite. */
    record Result(String scenario, boolean pass, boolean skipped, double seconds, String detail) {
        Result(String scenario, boolean pass, double seconds, String detail) {
            this(scenario, pass, false, seconds, detail);
        }

        static Result skip(String scenario, double seconds, String reason) {
            return new Result(scenario, false, true, seconds, reason);
        }

        /** {@code pass}, {@code fail} or {@code skip}. */
        String result() {
            return skipped ? "skip" : pass ? "pass" : "fail";
        }
    }

    private final List<Result> results = new ArrayList<>();

    void add(Result r) {
        results.add(r);
    }

    List<Result> results() {
        return List.copyOf(results);
    }

    boolean allPassed() {
        return !results.isEmpty() && results.stream().allMatch(r -> r.pass() || r.skipped());
    }

    static String header() {
        return String.format(Locale.ROOT, "| %-24s | %-6s | %7s | %s", "scenario", "result", "seconds", "detail");
    }

    static String row(Result r) {
        return String.format(Locale.ROOT, "| %-24s | %-6s | %7.1f | %s", r.scenario(), r.result().toUpperCase(Locale.ROOT),
                r.seconds(), oneLine(r.detail()));
    }

    /** {@code {"bench":"chaos","scenario":S,"result":"pass"|"fail"|"skip","seconds":T,"detail":D}}. */
    static String json(Result r) {
        return String.format(Locale.ROOT, "{\"bench\":\"chaos\",\"scenario\":\"%s\",\"result\":\"%s\",\"seconds\":%.1f,"
                + "\"detail\":\"%s\"}", escape(r.scenario()), r.result(), r.seconds(),
                escape(oneLine(r.detail())));
    }

    String summary() {
        List<String> failed = results.stream().filter(r -> !r.pass() && !r.skipped()).map(Result::scenario).toList();
        List<String> skipped = results.stream().filter(Result::skipped).map(Result::scenario).toList();
        long passed = results.stream().filter(Result::pass).count();
        return "bench chaos: " + passed + " of " + results.size() + " scenarios passed"
                + (skipped.isEmpty() ? "" : "; skipped: " + String.join(", ", skipped))
                + (failed.isEmpty() ? "" : "; failed: " + String.join(", ", failed));
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*[\\r\\n]+\\s*", " / ");
    }

    /** @return {@code s} escaped for the inside of a JSON string (by Jackson, which Vert.x brings) */
    static String escape(String s) {
        return new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(s));
    }
}
