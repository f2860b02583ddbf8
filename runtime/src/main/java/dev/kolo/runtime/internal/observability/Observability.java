package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.flight.FlightDumper;
import dev.kolo.runtime.internal.flight.FlightRecorder;

/**
 * A worker's meters, timeline and flight recorder, handed to the parts that record into them; a process set's engine
 * gets a view of its worker's ({@link #forProcessSet}) whose timeline names the set, which also counts the set's ops,
 * and which records into the worker's flight recorder.
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
    /** The worker's flight recorder (a set's view reads its worker's), and what writes it once the rank is known. */
    private volatile FlightRecorder flight = FlightRecorder.OFF;
    private volatile FlightDumper dumper;

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

    /** @return the worker's flight recorder ({@link FlightRecorder#OFF} when it keeps none) */
    public FlightRecorder flight() {
        return worker == null ? flight : worker.flight();
    }

    /** The worker's recorder, set before its first op. */
    public void flight(FlightRecorder recorder) {
        this.flight = recorder;
    }

    /** @return what writes the worker's flight recorder files, or null before the rank is known or when it is off */
    public FlightDumper flightDumper() {
        return worker == null ? dumper : worker.flightDumper();
    }

    /** Starts writing the worker's flight recorder files (once the rank is known). */
    public void flightDumper(FlightDumper d) {
        this.dumper = d;
    }

    /** Stops writing flight recorder files: a closing worker's ops fail by its own doing, which is no news. */
    public void stopFlight() {
        FlightDumper d = dumper;
        if (worker == null && d != null) {
            d.close();
        }
    }

    /**
     * @return whether anything records op times (the meters, a process set's among them, the timeline or the flight recorder): when
     *         nothing does, the engine does not read the clock for them
     */
    public boolean timed() {
        return metrics.enabled() || timeline().enabled() || flight().enabled();
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
            stopFlight();
            timeline.close();
            metrics.close();
        }
    }
}
