package dev.kolo.runtime.internal.observability;

/** A worker's meters and timeline, handed to the parts that record into them. */
public final class Observability implements AutoCloseable {
    public final KoloMetrics metrics;
    private volatile Timeline timeline = Timeline.OFF;

    public Observability(KoloMetrics metrics) {
        this.metrics = metrics;
    }

    public Timeline timeline() {
        return timeline;
    }

    /** The timeline starts once the rank is known (it names the trace's process). */
    public void timeline(Timeline t) {
        this.timeline = t;
    }

    @Override
    public void close() {
        timeline.close();
        metrics.close();
    }
}
