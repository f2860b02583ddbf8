package dev.kolo.runtime;

/** A worker's meters and timeline, handed to the parts that record into them. */
final class Observability implements AutoCloseable {
    final KoloMetrics metrics;
    private volatile Timeline timeline = Timeline.OFF;

    Observability(KoloMetrics metrics) {
        this.metrics = metrics;
    }

    Timeline timeline() {
        return timeline;
    }

    /** The timeline starts once the rank is known (it names the trace's process). */
    void timeline(Timeline t) {
        this.timeline = t;
    }

    @Override
    public void close() {
        timeline.close();
        metrics.close();
    }
}
