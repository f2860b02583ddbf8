package dev.kolo.runtime.internal.status;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The facts the status page shows, gathered on one worker: its generation, the ranks' latest reports (all ranks
 * on the coordinator's worker, its own elsewhere), the generation history, the stalls the coordinator sees, and
 * one sample per status interval of the plotted series. Confined to {@link StatusVerticle}'s context.
 */
final class StatusBoard {
    /** Samples kept per series: ten minutes at one per second. */
    static final int SERIES_LENGTH = 600;
    /** Generation events kept. */
    static final int HISTORY_LENGTH = 200;
    /** A rank whose report is older than this many status intervals is shown as silent. */
    static final int SILENT_AFTER_INTERVALS = 3;
    /** Rates are taken over this many samples, so that steps longer than an interval still give a rate. */
    static final int RATE_WINDOW = 5;

    private final long intervalMillis;
    private JsonObject view = new JsonObject().put("generation", 0).put("size", 0).put("active", false)
            .put("workers", new JsonArray());
    private final Map<Integer, Report> reports = new TreeMap<>();
    private final Deque<JsonObject> history = new ArrayDeque<>();
    private JsonArray stalls = new JsonArray();
    private long stallsAtMillis;
    private final Deque<Sample> series = new ArrayDeque<>();
    private JsonObject lastCommit;
    private JsonObject lastCheckpoint;
    private final Set<Integer> lost = new LinkedHashSet<>();
    /** Ranks that closed in order (their program called close): not a failure, so not shown as lost. */
    private final Set<Integer> closed = new LinkedHashSet<>();

    StatusBoard(long intervalMillis) {
        this.intervalMillis = intervalMillis;
    }

    /** This worker's view of its generation changed (see {@link StatusVerticle} for the fields). */
    void view(JsonObject v) {
        if (v.getLong("generation", 0L) != view.getLong("generation", 0L)) {
            reports.clear(); // a new generation: ranks are renumbered
            lost.clear();
            closed.clear();
            stalls = new JsonArray();
        }
        view = v;
    }

    void event(JsonObject e) {
        history.addLast(e);
        while (history.size() > HISTORY_LENGTH) {
            history.removeFirst();
        }
        Integer lostRank = e.getInteger("lostRank");
        if (lostRank != null) {
            ("closed".equals(e.getString("event")) ? closed : lost).add(lostRank);
        }
    }

    /** A rank's report of {@code generation}; one of an older generation is dropped. */
    void report(int rank, long generation, JsonObject report, long nowMillis) {
        if (generation != view.getLong("generation", 0L)) {
            return;
        }
        reports.put(rank, new Report(report, nowMillis));
        JsonObject commit = report.getJsonObject("commit");
        if (commit != null && newer(commit, lastCommit)) {
            lastCommit = commit.copy().put("rank", rank);
        }
        JsonObject checkpoint = report.getJsonObject("checkpoint");
        if (checkpoint != null && newer(checkpoint, lastCheckpoint)) {
            lastCheckpoint = checkpoint.copy().put("rank", rank);
        }
    }

    private static boolean newer(JsonObject candidate, JsonObject current) {
        return current == null || candidate.getLong("time", 0L) > current.getLong("time", 0L);
    }

    /** The coordinator's tensors that wait for some ranks (empty when none does). */
    void stalls(JsonArray list, long nowMillis) {
        stalls = list;
        stallsAtMillis = nowMillis;
    }

    /** Takes one sample of every series. */
    void sample(long nowMillis) {
        Sample s = new Sample(nowMillis, jobStep());
        reports.forEach((rank, r) -> s.rankSamples.put(rank, r.report.getLong("samples", 0L)));
        Sample base = rateBase();
        // No rate across a rollback (an elastic restore goes back to the last commit) or before every rank reported.
        if (base != null && s.step >= 0 && base.step >= 0 && s.step >= base.step && s.millis > base.millis) {
            double seconds = (s.millis - base.millis) / 1000.0;
            s.stepsPerSecond = (s.step - base.step) / seconds;
            // Over the ranks in both samples: a rank whose first report arrived in between adds no jump.
            long samples = 0;
            for (Map.Entry<Integer, Long> e : s.rankSamples.entrySet()) {
                Long before = base.rankSamples.get(e.getKey());
                samples += before == null ? 0 : e.getValue() - before;
            }
            s.samplesPerSecond = samples / seconds;
        }
        Map<String, double[]> sums = new TreeMap<>(); // name -> {sum, count}: the mean over ranks
        reports.forEach((rank, r) -> {
            if (fresh(r, nowMillis)) {
                JsonObject values = r.report.getJsonObject("scalars", new JsonObject());
                for (String name : values.fieldNames()) {
                    Number v = values.getNumber(name);
                    if (v != null) {
                        double[] acc = sums.computeIfAbsent(name, k -> new double[2]);
                        acc[0] += v.doubleValue();
                        acc[1]++;
                    }
                }
                Number busy = r.report.getNumber("busyMillis");
                if (busy != null) {
                    s.rankBusy.put(rank, busy.doubleValue());
                }
            }
        });
        sums.forEach((name, acc) -> s.scalars.put(name, acc[0] / acc[1]));
        series.addLast(s);
        while (series.size() > SERIES_LENGTH) {
            series.removeFirst();
        }
    }

    /** The sample a rate is taken from: {@link #RATE_WINDOW} samples back, or the oldest there is. */
    private Sample rateBase() {
        Sample base = null;
        java.util.Iterator<Sample> newestFirst = series.descendingIterator();
        for (int i = 0; i < RATE_WINDOW && newestFirst.hasNext(); i++) {
            base = newestFirst.next();
        }
        return base;
    }

    private boolean fresh(Report r, long nowMillis) {
        return nowMillis - r.atMillis <= SILENT_AFTER_INTERVALS * intervalMillis;
    }

    /** The job's step: the lowest any rank of the generation reported, -1 before every rank has reported one. */
    private long jobStep() {
        int size = view.getInteger("size", 0);
        boolean job = view.getBoolean("coordinator", false);
        if (reports.isEmpty() || job && reports.size() < size) {
            return -1;
        }
        long min = Long.MAX_VALUE;
        for (Report r : reports.values()) {
            min = Math.min(min, r.report.getLong("step", -1L));
        }
        return min;
    }

    /** The page's facts; with the series for a full load, without them (and with the newest sample) for an event. */
    JsonObject status(boolean withSeries, long nowMillis) {
        Sample last = series.peekLast();
        JsonObject out = new JsonObject()
                .put("job", view.getString("job"))
                .put("view", view.getBoolean("coordinator", false) ? "job" : "rank")
                .put("selfRank", view.getInteger("selfRank", -1))
                .put("coordinatorUrl", view.getString("coordinatorUrl"))
                .put("generation", view.getLong("generation", 0L))
                .put("size", view.getInteger("size", 0))
                .put("coordinatorRank", view.getInteger("coordinatorRank", -1))
                .put("step", last == null ? jobStep() : last.step)
                .put("stepsPerSecond", last == null ? null : last.stepsPerSecond)
                .put("samplesPerSecond", last == null ? null : last.samplesPerSecond)
                .put("transport", view.getString("transport"))
                .put("kernels", view.getString("kernels"))
                .put("time", nowMillis)
                .put("ranks", ranks(nowMillis))
                .put("history", new JsonArray(new java.util.ArrayList<>(history)))
                .put("stalls", stalls(nowMillis))
                .put("lastCommit", lastCommit)
                .put("lastCheckpoint", lastCheckpoint)
                .put("scalars", last == null ? new JsonObject() : last.scalarsJson());
        if (withSeries) {
            out.put("series", seriesJson());
        } else if (last != null) {
            out.put("point", last.toJson());
        }
        return out;
    }

    /**
     * The coordinator's stalls (tensors some ranks submitted and others not) merged with what the ranks report
     * waiting for: a tensor that fresh reports wait for names as missing every rank of the generation that does
     * not (a stopped rank sends no report; ranks stuck in their own agreement round never reach the coordinator).
     */
    private JsonArray stalls(long nowMillis) {
        Map<String, JsonObject> byTensor = new TreeMap<>();
        if (nowMillis - stallsAtMillis <= SILENT_AFTER_INTERVALS * intervalMillis) {
            for (Object o : stalls) {
                JsonObject s = (JsonObject) o;
                byTensor.put(s.getString("tensor"), s.copy());
            }
        }
        boolean job = view.getBoolean("coordinator", false);
        Map<String, Set<Integer>> waiters = new TreeMap<>();
        Map<String, Double> longest = new TreeMap<>();
        reports.forEach((rank, r) -> {
            if (fresh(r, nowMillis)) {
                for (Object o : r.report.getJsonArray("waiting", new JsonArray())) {
                    JsonObject w = (JsonObject) o;
                    String tensor = w.getString("tensor");
                    waiters.computeIfAbsent(tensor, t -> new java.util.TreeSet<>()).add(rank);
                    longest.merge(tensor, w.getDouble("seconds", 0.0), Math::max);
                }
            }
        });
        waiters.forEach((tensor, waiting) -> {
            JsonArray missing = new JsonArray();
            if (job) {
                for (int rank = 0; rank < view.getInteger("size", 0); rank++) {
                    if (!waiting.contains(rank)) {
                        missing.add(rank);
                    }
                }
                if (missing.isEmpty()) {
                    return; // every rank is in it: a long op, not a stall
                }
            }
            JsonObject known = byTensor.get(tensor);
            if (known == null) {
                byTensor.put(tensor, new JsonObject().put("tensor", tensor).put("missingRanks", missing)
                        .put("seconds", longest.get(tensor)));
            } else {
                Set<Object> union = new java.util.TreeSet<>(known.getJsonArray("missingRanks").getList());
                union.addAll(missing.getList());
                known.put("missingRanks", new JsonArray(new java.util.ArrayList<>(union)))
                        .put("seconds", Math.max(known.getDouble("seconds", 0.0), longest.get(tensor)));
            }
        });
        return new JsonArray(new java.util.ArrayList<>(byTensor.values()));
    }

    private JsonArray ranks(long nowMillis) {
        JsonArray rows = new JsonArray();
        boolean active = view.getBoolean("active", false);
        boolean job = view.getBoolean("coordinator", false);
        int self = view.getInteger("selfRank", -1);
        for (Object o : view.getJsonArray("workers", new JsonArray())) {
            JsonObject w = (JsonObject) o;
            int rank = w.getInteger("rank");
            if (!job && rank != self) {
                continue; // a worker that does not coordinate shows its own row; the job is on the coordinator's page
            }
            Report r = reports.get(rank);
            String state;
            if (lost.contains(rank)) {
                state = "lost";
            } else if (closed.contains(rank)) {
                state = "closed";
            } else if (!active) {
                state = "waiting";
            } else if (r == null) {
                state = "starting";
            } else {
                state = fresh(r, nowMillis) ? "running" : "silent";
            }
            JsonObject row = w.copy().put("state", state);
            if (r != null) {
                row.put("step", r.report.getLong("step")).put("stepMillis", r.report.getNumber("stepMillis"))
                        .put("busyMillis", r.report.getNumber("busyMillis"))
                        .put("bytesSent", r.report.getLong("bytesSent"))
                        .put("samplesPerSecond", r.report.getNumber("samplesPerSecond"))
                        .put("pace", r.report.getString("pace"))
                        .put("inFlight", r.report.getJsonObject("inFlight"))
                        .put("lastSeenSeconds", (nowMillis - r.atMillis) / 1000.0);
            }
            rows.add(row);
        }
        return rows;
    }

    private JsonObject seriesJson() {
        Set<String> names = new LinkedHashSet<>();
        Set<Integer> ranks = new java.util.TreeSet<>();
        series.forEach(s -> {
            names.addAll(s.scalars.keySet());
            ranks.addAll(s.rankBusy.keySet());
        });
        JsonArray time = new JsonArray();
        JsonArray steps = new JsonArray();
        JsonArray samples = new JsonArray();
        JsonObject scalars = new JsonObject();
        JsonObject busy = new JsonObject();
        names.forEach(n -> scalars.put(n, new JsonArray()));
        ranks.forEach(r -> busy.put(Integer.toString(r), new JsonArray()));
        for (Sample s : series) {
            time.add(s.millis / 1000.0);
            steps.add(s.stepsPerSecond);
            samples.add(s.samplesPerSecond);
            names.forEach(n -> scalars.getJsonArray(n).add(s.scalars.get(n)));
            ranks.forEach(r -> busy.getJsonArray(Integer.toString(r)).add(s.rankBusy.get(r)));
        }
        return new JsonObject().put("time", time).put("stepsPerSecond", steps).put("samplesPerSecond", samples)
                .put("scalars", scalars).put("rankBusyMillis", busy);
    }

    /** A rank's last report and when it arrived. */
    private record Report(JsonObject report, long atMillis) {
    }

    /** One sample of the plotted series. */
    private static final class Sample {
        final long millis;
        final long step;
        final Map<Integer, Long> rankSamples = new TreeMap<>();
        Double stepsPerSecond;
        Double samplesPerSecond;
        final Map<String, Double> scalars = new TreeMap<>();
        final Map<Integer, Double> rankBusy = new TreeMap<>();

        Sample(long millis, long step) {
            this.millis = millis;
            this.step = step;
        }

        JsonObject scalarsJson() {
            JsonObject out = new JsonObject();
            scalars.forEach(out::put);
            return out;
        }

        JsonObject toJson() {
            JsonObject busy = new JsonObject();
            rankBusy.forEach((r, v) -> busy.put(Integer.toString(r), v));
            return new JsonObject().put("time", millis / 1000.0).put("stepsPerSecond", stepsPerSecond)
                    .put("samplesPerSecond", samplesPerSecond).put("scalars", scalarsJson())
                    .put("rankBusyMillis", busy);
        }
    }
}
