package dev.kolo.runtime.internal.status;

import dev.kolo.runtime.internal.access.ProgressNotes;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

/**
 * What this rank's program reports about its training (steps, samples, its own scalars such as the loss) and
 * what Kolo's modules note (the last commit, the last checkpoint), turned into the rank's status report once a
 * status interval. Written by program threads without allocating (after a scalar's first report), read by the
 * reporting timer; thread-safe.
 */
public final class RankProgress implements ProgressNotes {
    /** Scalars one rank may report: each is a meter and a plotted series, so their number is bounded. */
    public static final int MAX_SCALARS = 32;
    /** Longest scalar name: it becomes a metric tag and a legend entry. */
    public static final int MAX_NAME = 64;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1," + MAX_NAME + "}");
    /** A checkpoint path longer than this is shortened in the report (it must fit one control message). */
    private static final int MAX_PATH = 512;

    private final KoloMetrics metrics;
    private final AtomicLong step = new AtomicLong(-1);
    private final AtomicLong steps = new AtomicLong();
    private final AtomicLong samples = new AtomicLong();
    private volatile long lastStepNanos;
    private final ConcurrentHashMap<String, Scalar> scalars = new ConcurrentHashMap<>();
    private final AtomicReference<JsonObject> lastCommit = new AtomicReference<>();
    private final AtomicReference<JsonObject> lastCheckpoint = new AtomicReference<>();
    private volatile String pace;

    // The reporting timer's own state: what the previous report saw, to turn totals into per-step figures.
    private long reportedSteps;
    private long reportedStepNanos;
    private long reportedWaitNanos;
    private long reportedSamples;
    private long reportedAtNanos;
    private Double stepMillis;
    private Double busyMillis;

    public RankProgress(KoloMetrics metrics) {
        this.metrics = metrics;
        Gauge.builder("kolo.program.step", step, AtomicLong::get)
                .description("The last training step the program reported (Kolo.reportStep)").register(metrics.registry());
        io.micrometer.core.instrument.FunctionCounter.builder("kolo.program.samples", samples, AtomicLong::get)
                .description("Samples the program reported as processed (Kolo.reportStep)").register(metrics.registry());
    }

    /** The program finished training step {@code step}, which processed {@code stepSamples} samples. */
    public void step(long step, long stepSamples) {
        if (step < 0 || stepSamples < 0) {
            throw new IllegalArgumentException("reportStep(" + step + ", " + stepSamples + "): the step and its "
                    + "number of samples are counts, never negative");
        }
        this.step.set(step);
        samples.addAndGet(stepSamples);
        lastStepNanos = System.nanoTime();
        steps.incrementAndGet(); // last: the reporter reads the count, then the time it belongs with
    }

    /** The program's newest value of its scalar {@code name} (a loss, an accuracy, a learning rate). */
    public void scalar(String name, double value) {
        Scalar s = name == null ? null : scalars.get(name);
        if (s == null) {
            s = register(name);
        }
        s.value = value;
    }

    private synchronized Scalar register(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("reportScalar: name '" + name + "' is not accepted; use 1 to "
                    + MAX_NAME + " letters, digits, '_', '.' or '-', e.g. \"loss\"");
        }
        Scalar s = scalars.get(name);
        if (s != null) {
            return s;
        }
        if (scalars.size() >= MAX_SCALARS) {
            throw new IllegalArgumentException("reportScalar: '" + name + "' would be this rank's scalar number "
                    + (MAX_SCALARS + 1) + "; at most " + MAX_SCALARS + " names are kept (each is a meter and a "
                    + "plotted series): reuse names rather than putting a step or an id into them");
        }
        Scalar fresh = new Scalar();
        Gauge.builder("kolo.program.scalar", fresh, x -> x.value).tag("name", name)
                .description("A value the program reports (Kolo.reportScalar)").register(metrics.registry());
        scalars.put(name, fresh);
        return fresh;
    }

    @Override
    public void committed() {
        lastCommit.set(new JsonObject().put("step", step.get()).put("time", System.currentTimeMillis()));
    }

    @Override
    public void checkpointed(long checkpointStep, String path) {
        String shown = path.length() <= MAX_PATH ? path : "..." + path.substring(path.length() - MAX_PATH);
        lastCheckpoint.set(new JsonObject().put("step", checkpointStep).put("path", shown)
                .put("time", System.currentTimeMillis()));
    }

    @Override
    public void pace(String note) {
        pace = note;
    }

    @Override
    public long waitedNanos() {
        return metrics.waitedNanos();
    }

    /**
     * This rank's status report: totals, and its step time and busy time (step time minus the time its threads
     * waited for collectives) averaged over the steps since the last report. Called by one timer only.
     */
    public JsonObject report() {
        long now = System.nanoTime();
        long count = steps.get();
        long stepNanos = lastStepNanos;
        long waited = metrics.waitedNanos();
        long sampleTotal = samples.get();
        long newSteps = count - reportedSteps;
        if (newSteps > 0 && reportedSteps > 0) {
            double perStep = (stepNanos - reportedStepNanos) / 1e6 / newSteps;
            stepMillis = perStep;
            busyMillis = Math.max(0, perStep - (waited - reportedWaitNanos) / 1e6 / newSteps);
        }
        Double samplesPerSecond = reportedAtNanos == 0 || count == 0 ? null
                : (sampleTotal - reportedSamples) / ((now - reportedAtNanos) / 1e9);
        if (newSteps > 0) {
            reportedSteps = count;
            reportedStepNanos = stepNanos;
            reportedWaitNanos = waited;
        }
        reportedSamples = sampleTotal;
        reportedAtNanos = now;
        JsonObject values = new JsonObject();
        scalars.forEach((name, s) -> values.put(name, Double.isFinite(s.value) ? s.value : null));
        return new JsonObject().put("step", step.get()).put("samples", sampleTotal).put("stepMillis", stepMillis)
                .put("busyMillis", busyMillis).put("samplesPerSecond", samplesPerSecond)
                .put("bytesSent", metrics.bytesSent()).put("scalars", values).put("commit", lastCommit.get())
                .put("checkpoint", lastCheckpoint.get()).put("pace", pace);
    }

    /** One reported scalar; a holder so that the hot path writes a field instead of boxing into a map. */
    private static final class Scalar {
        volatile double value = Double.NaN;
    }
}
