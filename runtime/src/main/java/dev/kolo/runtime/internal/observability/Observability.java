package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.internal.control.OpType;

/**
 * A worker's meters and timeline, handed to the parts that record into them; a process set's engine gets a view
 * of its worker's ({@link #forProcessSet}) whose timeline names the set and which also counts the set's ops.
 */
public final class Observability implements AutoCloseable {
    public final KoloMetrics metrics;
    private volatile Timeline timeline = Timeline.OFF;
    /** The worker's observability when this is a process set's view, else null. */
    private final Observability worker;
    /** The set's id as its meters' tag, or null for the worker's own. */
    private final String processSet;
    private final ProcessSetMeters setMeters;
    /** The worker's timeline this view last wrapped, and the wrapper. */
    private volatile Prefixed prefixed = new Prefixed(null, Timeline.OFF);

    private record Prefixed(Timeline of, Timeline view) {
    }

    public Observability(KoloMetrics metrics) {
        this(metrics, null, null);
    }

    private Observability(KoloMetrics metrics, Observability worker, String processSet) {
        this.metrics = metrics;
        this.worker = worker;
        this.processSet = processSet;
        this.setMeters = processSet == null ? null : metrics.processSetMeters(processSet);
    }

    /** @return a view for process set {@code id}: the same meters, a timeline whose tensors are "set id/name" */
    public Observability forProcessSet(int id) {
        return new Observability(metrics, this, Integer.toString(id));
    }

    public Timeline timeline() {
        if (worker == null) {
            return timeline;
        }
        Timeline t = worker.timeline();
        Prefixed p = prefixed;
        if (p.of() != t) { // the worker's timeline starts once the rank is known
            p = new Prefixed(t, t.enabled() ? new PrefixedTimeline(t, "set " + processSet + "/") : t);
            prefixed = p;
        }
        return p.view();
    }

    /** The timeline starts once the rank is known (it names the trace's process). */
    public void timeline(Timeline t) {
        this.timeline = t;
    }

    /**
     * @return whether anything records op times (the meters, a process set's among them, or the timeline): when
     *         nothing does, the engine does not read the clock for them
     */
    public boolean timed() {
        return metrics.enabled() || timeline().enabled();
    }

    /** Counts one op of this process set (nothing for the worker's own ops: its collective meters have them). */
    public void processSetOp(OpType op, long nanos, long tensorBytes) {
        if (setMeters != null) {
            setMeters.record(op, nanos, tensorBytes);
        }
    }

    @Override
    public void close() {
        if (worker == null) {
            timeline.close();
            metrics.close();
        }
    }
}
