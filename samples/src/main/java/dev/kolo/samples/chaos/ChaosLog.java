package dev.kolo.samples.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pass criteria that hold in every scenario, checked on the workers' output lines (API.md, "the elastic
 * sample"): at equal step and generation every worker printed the same parameter checksum; no worker rolled back
 * behind a commit it had printed (nothing committed is lost); every final {@code done} line has the same checksum.
 */
final class ChaosLog {
    static final Pattern STEP = Pattern.compile(
            "kolo: step=(\\d+) epoch=(\\d+) size=(\\d+) gen=(\\d+) checksum=([0-9a-f]+)");
    static final Pattern RESET = Pattern.compile(
            "kolo: reset reason=(\\w+) size=(\\d+) gen=(\\d+) previous_size=(\\d+) rank=(\\d+) step=(\\d+)");
    static final Pattern DONE = Pattern.compile(
            "kolo: done rank=(\\d+) size=(\\d+) epochs=(\\d+) test_accuracy=([0-9.]+) checksum=([0-9a-f]+)");

    private final Map<String, List<String>> workers = new java.util.LinkedHashMap<>();

    /** Adds one worker's stdout lines under a name used in failure details (e.g. {@code w2}). */
    ChaosLog add(String worker, List<String> lines) {
        workers.put(worker, List.copyOf(lines));
        return this;
    }

    /** Checks the checksum and no-lost-commit criteria; returns how many (step, gen) points were compared. */
    int checkConsistent() throws ChaosFailure {
        Map<String, Map<String, String>> byPoint = new TreeMap<>();
        for (Map.Entry<String, List<String>> w : workers.entrySet()) {
            long lastCommitted = -1;
            for (String line : w.getValue()) {
                Matcher m = STEP.matcher(line);
                if (m.find()) {
                    String point = "step " + m.group(1) + " gen " + m.group(4);
                    String before = byPoint.computeIfAbsent(point, k -> new TreeMap<>()).put(w.getKey(), m.group(5));
                    if (before != null && !before.equals(m.group(5))) {
                        throw new ChaosFailure(w.getKey() + " printed two checksums at " + point);
                    }
                    lastCommitted = Math.max(lastCommitted, Long.parseLong(m.group(1)));
                    continue;
                }
                Matcher r = RESET.matcher(line);
                if (r.find() && Long.parseLong(r.group(6)) < lastCommitted) {
                    throw new ChaosFailure(w.getKey() + " lost a commit: it printed step=" + lastCommitted
                            + " but its reset (" + r.group(1) + ", gen " + r.group(3) + ") went back to step="
                            + r.group(6));
                }
            }
        }
        int compared = 0;
        for (Map.Entry<String, Map<String, String>> p : byPoint.entrySet()) {
            if (new LinkedHashSet<>(p.getValue().values()).size() > 1) {
                throw new ChaosFailure("checksums differ at " + p.getKey() + ": " + p.getValue());
            }
            if (p.getValue().size() > 1) {
                compared++;
            }
        }
        return compared;
    }

    /** The workers' {@code done} lines' checksums, checked equal; fails if fewer than {@code atLeast} printed one. */
    String checkDone(int atLeast) throws ChaosFailure {
        Map<String, String> sums = new TreeMap<>();
        for (Map.Entry<String, List<String>> w : workers.entrySet()) {
            for (String line : w.getValue()) {
                Matcher m = DONE.matcher(line);
                if (m.find()) {
                    sums.put(w.getKey(), m.group(5));
                }
            }
        }
        if (sums.size() < atLeast) {
            throw new ChaosFailure("only " + sums.size() + " worker(s) printed a done line, expected at least "
                    + atLeast + " " + sums.keySet());
        }
        Set<String> distinct = new LinkedHashSet<>(sums.values());
        if (distinct.size() != 1) {
            throw new ChaosFailure("done checksums differ: " + sums);
        }
        return distinct.iterator().next();
    }

    /** Every reset line of every worker, as {@code worker: reason}. */
    List<String> resets() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> w : workers.entrySet()) {
            for (String line : w.getValue()) {
                Matcher r = RESET.matcher(line);
                if (r.find()) {
                    out.add(w.getKey() + ": " + r.group(1));
                }
            }
        }
        return out;
    }

    /** Highest step any worker printed. */
    long maxStep() {
        long max = -1;
        for (List<String> lines : workers.values()) {
            for (String line : lines) {
                Matcher m = STEP.matcher(line);
                if (m.find()) {
                    max = Math.max(max, Long.parseLong(m.group(1)));
                }
            }
        }
        return max;
    }

    static Map<String, String> fields(Pattern p, String line, String... names) {
        Matcher m = p.matcher(line);
        Map<String, String> out = new HashMap<>();
        if (m.find()) {
            for (int i = 0; i < names.length; i++) {
                out.put(names[i], m.group(i + 1));
            }
        }
        return out;
    }
}
