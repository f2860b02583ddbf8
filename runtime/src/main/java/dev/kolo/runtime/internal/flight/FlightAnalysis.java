package dev.kolo.runtime.internal.flight;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads every rank's flight recorder file of a job and names the culprit, the verdict first:
 * <ol>
 * <li>a <b>mismatch</b>: the same op (name and occurrence) submitted with another op, dtype or shape by some ranks,
 *     naming both sides;</li>
 * <li>a <b>missing op</b>: an op that some ranks submitted and waited on while others never submitted it (of
 *     several, the one missing on the fewest ranks, then the first), naming those ranks and what each was waiting on
 *     instead;</li>
 * <li>a <b>missing rank</b>: a rank of the job that left no file (stopped, killed, unreachable), and the op the others
 *     were waiting on;</li>
 * <li>a <b>straggler</b>: the rank the others wait for, by how long each rank's ops took from its own submit to their
 *     finish (the last rank to submit waits least), which needs no common clock.</li>
 * </ol>
 * The same op is recognized on every rank by its process set, name and occurrence (this rank's n-th submit of the
 * name), whatever order the ranks submitted in.
 */
public final class FlightAnalysis {
    /** A missing op counts when its ranks waited at least this long, or when a stall or failure wrote the files. */
    public static final long DEFAULT_STUCK_AFTER_MICROS = 10_000_000;
    /** A straggler is named only when it caused at least this share of the others' waiting... */
    static final double STRAGGLER_SHARE = 0.6;
    /** ...and they waited for it at least this long per op, on average (above the jitter of a balanced job). */
    static final long STRAGGLER_MIN_MICROS = 1000;

    private final List<FlightDumpFile> dumps;
    private final long stuckAfterMicros;
    private final int size;
    /** Per rank: its records by op key (the newest of a key), and the highest occurrence per set and name. */
    private final Map<Integer, Map<String, FlightRecord>> byKey = new TreeMap<>();
    private final Map<Integer, Map<String, Integer>> lastOccurrence = new TreeMap<>();
    private final Map<Integer, FlightDumpFile> byRank = new TreeMap<>();

    private FlightAnalysis(List<FlightDumpFile> dumps, long stuckAfterMicros) {
        this.dumps = dumps;
        this.stuckAfterMicros = stuckAfterMicros;
        int n = 0;
        for (FlightDumpFile d : dumps) {
            byRank.put(d.rank(), d);
            n = Math.max(n, Math.max(d.size(), d.rank() + 1));
            Map<String, FlightRecord> keys = new HashMap<>();
            Map<String, Integer> last = new HashMap<>();
            for (FlightRecord r : d.ops()) {
                keys.put(r.key(), r);
                last.merge(r.set() + "/" + r.name(), r.occurrence(), Math::max);
            }
            byKey.put(d.rank(), keys);
            lastOccurrence.put(d.rank(), last);
        }
        this.size = n;
    }

    /** @return every {@code flight-rank-R.json} of {@code dir}, by rank */
    public static List<FlightDumpFile> read(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(dir + " is not a directory; name the directory holding the ranks' "
                    + "flight-rank-R.json files (KOLO_FLIGHT_DIR, launch --log-dir, or flight dump --out)");
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(p -> p.getFileName().toString().matches("flight-rank-\\d+\\.json")).sorted().toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no flight-rank-R.json in " + dir + "; the workers write them to "
                    + "KOLO_FLIGHT_DIR (launch: --log-dir) on a stall, a failure or a signal, and 'worker.jar "
                    + "flight dump' asks a running job for them");
        }
        List<FlightDumpFile> dumps = new ArrayList<>();
        for (Path f : files) {
            dumps.add(FlightDumpFile.read(f));
        }
        dumps.sort(Comparator.comparingInt(FlightDumpFile::rank));
        return dumps;
    }

    /** @return the report: its first line is the verdict, the lines after it the detail */
    public static List<String> analyse(List<FlightDumpFile> dumps, long stuckAfterMicros) {
        return new FlightAnalysis(dumps, stuckAfterMicros).report();
    }

    private List<String> report() {
        String verdict = mismatch();
        if (verdict == null) {
            verdict = missingOp();
        }
        if (verdict == null) {
            verdict = missingRank();
        }
        if (verdict == null) {
            verdict = straggler();
        }
        if (verdict == null) {
            verdict = "no culprit found: no op is mismatched or missing on a rank, every rank left its file, and no "
                    + "rank keeps the others waiting";
        }
        List<String> lines = new ArrayList<>();
        lines.add("verdict: " + verdict);
        lines.add("");
        detail(lines);
        return lines;
    }

    // ---------------------------------------------------------------- the verdicts

    private String mismatch() {
        String best = null;
        long bestAt = Long.MAX_VALUE;
        for (String key : allKeys()) {
            Map<String, List<Integer>> sides = new LinkedHashMap<>();
            long at = Long.MAX_VALUE;
            for (var e : byKey.entrySet()) {
                FlightRecord r = e.getValue().get(key);
                if (r != null) {
                    sides.computeIfAbsent(r.signature(), s -> new ArrayList<>()).add(e.getKey());
                    at = Math.min(at, r.submittedUs());
                }
            }
            if (sides.size() > 1 && at < bestAt) {
                bestAt = at;
                FlightRecord any = anyRecord(key);
                best = "mismatch on op " + any.label() + ": " + sides.entrySet().stream()
                        .map(s -> ranks(s.getValue()) + " submitted " + s.getKey()).collect(Collectors.joining("; "))
                        + " (the same name must have the same op, dtype and shape on every rank)";
            }
        }
        return best;
    }

    private String missingOp() {
        String best = null;
        long bestAt = Long.MAX_VALUE;
        // A rank that skipped an op waits on the next one, which the others have not reached: both ops are missing
        // somewhere, at about the same moment. The one missing on the fewest ranks names the ranks that diverged.
        int bestAbsent = Integer.MAX_VALUE;
        for (String key : allKeys()) {
            List<Integer> waiting = new ArrayList<>();
            List<Integer> absent = new ArrayList<>();
            long at = Long.MAX_VALUE;
            boolean stuck = false;
            FlightRecord any = null;
            for (int rank : byRank.keySet()) {
                FlightRecord r = byKey.get(rank).get(key);
                if (r != null && r.state() != FlightRecord.State.FINISHED) {
                    waiting.add(rank);
                    at = Math.min(at, r.submittedUs());
                    FlightDumpFile d = byRank.get(rank);
                    stuck |= !d.trigger().equals("request") || r.waitedUs(d.dumpedAtUs()) >= stuckAfterMicros;
                    any = r;
                } else if (r == null && lastOccurrence.get(rank).getOrDefault(setAndName(key), 0) < occurrence(key)) {
                    absent.add(rank);
                }
            }
            if (!waiting.isEmpty() && !absent.isEmpty() && stuck
                    && (absent.size() < bestAbsent || absent.size() == bestAbsent && at < bestAt)) {
                bestAt = at;
                bestAbsent = absent.size();
                FlightRecord r = any;
                long waited = waiting.stream().mapToLong(w -> byKey.get(w).get(key).waitedUs(
                        byRank.get(w).dumpedAtUs())).max().orElse(0);
                best = ranks(absent) + " never submitted op " + r.label() + " (" + r.signature() + "), which "
                        + ranks(waiting) + " submitted and waited on for " + seconds(waited) + " s"
                        + (r.state() == FlightRecord.State.FAILED ? " until it failed: " + r.error() : "") + "; "
                        + absent.stream().map(this::doingInstead).collect(Collectors.joining("; "));
            }
        }
        return best;
    }

    /** @return what {@code rank} was waiting on at its dump, or what it did last */
    private String doingInstead(int rank) {
        FlightDumpFile d = byRank.get(rank);
        List<FlightRecord> waiting = d.ops().stream().filter(r -> !r.done()).toList();
        if (!waiting.isEmpty()) {
            return "rank " + rank + " was waiting on " + waiting.stream().limit(3)
                    .map(r -> r.label() + " (" + r.signature() + ", for " + seconds(r.waitedUs(d.dumpedAtUs())) + " s)")
                    .collect(Collectors.joining(", ")) + (waiting.size() > 3 ? " and " + (waiting.size() - 3)
                    + " more" : "") + " instead";
        }
        if (d.ops().isEmpty()) {
            return "rank " + rank + " had submitted no op";
        }
        FlightRecord last = d.ops().get(d.ops().size() - 1);
        return "rank " + rank + " had no op in flight: its last, " + last.label() + ", ended "
                + seconds(d.dumpedAtUs() - last.finishedUs()) + " s before its file was written (busy outside "
                + "Kolo, or done)";
    }

    private String missingRank() {
        List<Integer> missing = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (!byRank.containsKey(r)) {
                missing.add(r);
            }
        }
        if (missing.isEmpty()) {
            return null;
        }
        FlightRecord oldest = null;
        List<Integer> waiting = new ArrayList<>();
        for (FlightDumpFile d : byRank.values()) {
            for (FlightRecord r : d.ops()) {
                if (r.state() != FlightRecord.State.FINISHED) {
                    if (oldest == null || r.submittedUs() < oldest.submittedUs()) {
                        oldest = r;
                    }
                }
            }
        }
        String what = ranks(missing) + " left no flight recorder file (stopped, killed or unreachable: a "
                + "stopped process writes nothing)";
        if (oldest == null) {
            return what + "; the other ranks had no op in flight";
        }
        for (int rank : byRank.keySet()) {
            FlightRecord r = byKey.get(rank).get(oldest.key());
            if (r != null && r.state() != FlightRecord.State.FINISHED) {
                waiting.add(rank);
            }
        }
        return what + "; " + ranks(waiting) + " were waiting on op " + oldest.label() + " (" + oldest.signature() + ")"
                + (oldest.error() != null ? ", which failed: " + oldest.error() : "");
    }

    private String straggler() {
        Map<Integer, Long> blame = new TreeMap<>();
        Map<Integer, Integer> last = new TreeMap<>();
        int matched = 0;
        long total = 0;
        for (String key : allKeys()) {
            Map<Integer, Long> waits = new TreeMap<>();
            for (int rank : byRank.keySet()) {
                FlightRecord r = byKey.get(rank).get(key);
                if (r == null || r.state() != FlightRecord.State.FINISHED) {
                    break;
                }
                waits.put(rank, r.finishedUs() - r.submittedUs());
            }
            if (waits.size() != byRank.size() || waits.size() < 2) {
                continue; // not finished on every rank
            }
            matched++;
            int lastRank = waits.entrySet().stream().min(Map.Entry.comparingByValue()).get().getKey();
            long own = waits.get(lastRank);
            long[] others = waits.entrySet().stream().filter(e -> e.getKey() != lastRank)
                    .mapToLong(Map.Entry::getValue).sorted().toArray();
            long late = others[others.length / 2] - own;
            blame.merge(lastRank, late, Long::sum);
            last.merge(lastRank, 1, Integer::sum);
            total += late;
        }
        if (matched == 0 || total <= 0) {
            return null;
        }
        var top = blame.entrySet().stream().max(Map.Entry.comparingByValue()).get();
        double share = top.getValue() / (double) total;
        long perOp = top.getValue() / matched;
        if (share < STRAGGLER_SHARE || perOp < STRAGGLER_MIN_MICROS) {
            return null;
        }
        return "rank " + top.getKey() + " is the straggler: of " + matched + " ops every rank finished it was the last "
                + "to submit " + last.getOrDefault(top.getKey(), 0) + ", and the other ranks waited for it "
                + millis(perOp) + " ms per op on average (" + percent(share) + " of all their waiting)";
    }

    // ---------------------------------------------------------------- the detail

    private void detail(List<String> lines) {
        lines.add("files: " + dumps.size() + " of a job of " + size + " ranks" + (dumps.isEmpty() ? ""
                : " (job " + dumps.get(0).job() + ")"));
        for (FlightDumpFile d : dumps) {
            List<FlightRecord> ops = d.ops();
            lines.add(String.format(Locale.ROOT, "rank %d (%s, pid %d): written on %s: %s", d.rank(), d.host(),
                    d.pid(), d.trigger(), d.reason()));
            lines.add(String.format(Locale.ROOT, "  %d ops recorded of %d kept%s", d.recorded(), d.capacity(),
                    ops.isEmpty() ? "" : " (seq " + ops.get(0).seq() + ".." + ops.get(ops.size() - 1).seq() + ")"));
            for (FlightRecord r : ops) {
                if (!r.done()) {
                    lines.add("  in flight: " + describe(r, d) + ", " + r.state().name().toLowerCase(Locale.ROOT));
                }
            }
            ops.stream().filter(r -> r.state() == FlightRecord.State.FAILED).skip(Math.max(0, ops.stream()
                            .filter(r -> r.state() == FlightRecord.State.FAILED).count() - 3))
                    .forEach(r -> lines.add("  failed: " + describe(r, d) + ": " + r.error()));
            ops.stream().filter(FlightRecord::done).reduce((a, b) -> b)
                    .ifPresent(r -> lines.add("  last done: " + describe(r, d)));
        }
    }

    private static String describe(FlightRecord r, FlightDumpFile d) {
        return "seq " + r.seq() + " " + r.label() + " " + r.signature() + " " + r.bytes() + " B"
                + (r.algorithm() != null ? " by " + r.algorithm() + " over " + r.transport() : "")
                + ", " + seconds(r.waitedUs(d.dumpedAtUs())) + " s from submit to "
                + (r.done() ? "finish" : "the file");
    }

    // ---------------------------------------------------------------- helpers

    /** @return every op key of any rank, oldest submit first */
    private List<String> allKeys() {
        Map<String, Long> first = new HashMap<>();
        for (Map<String, FlightRecord> keys : byKey.values()) {
            for (FlightRecord r : keys.values()) {
                first.merge(r.key(), r.submittedUs(), Math::min);
            }
        }
        List<String> keys = new ArrayList<>(first.keySet());
        keys.sort(Comparator.comparingLong(first::get));
        return keys;
    }

    private FlightRecord anyRecord(String key) {
        for (Map<String, FlightRecord> keys : byKey.values()) {
            FlightRecord r = keys.get(key);
            if (r != null) {
                return r;
            }
        }
        throw new IllegalStateException(key);
    }

    private static String setAndName(String key) {
        return key.substring(0, key.lastIndexOf('#'));
    }

    private static int occurrence(String key) {
        return Integer.parseInt(key.substring(key.lastIndexOf('#') + 1));
    }

    static String ranks(List<Integer> ranks) {
        TreeSet<Integer> sorted = new TreeSet<>(ranks);
        return (sorted.size() == 1 ? "rank " : "ranks ") + sorted.stream().map(String::valueOf)
                .collect(Collectors.joining(","));
    }

    private static String seconds(long micros) {
        return String.format(Locale.ROOT, "%.1f", micros / 1e6);
    }

    private static String millis(long micros) {
        return String.format(Locale.ROOT, "%.1f", micros / 1e3);
    }

    private static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f%%", share * 100);
    }
}
