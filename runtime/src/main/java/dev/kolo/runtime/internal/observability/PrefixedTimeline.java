package dev.kolo.runtime.internal.observability;

/** A process set's view of its worker's timeline: its tensors' tracks are named "set id/name". */
final class PrefixedTimeline implements Timeline {
    private final Timeline timeline;
    private final String prefix;

    PrefixedTimeline(Timeline timeline, String prefix) {
        this.timeline = timeline;
        this.prefix = prefix;
    }

    @Override
    public boolean enabled() {
        return timeline.enabled();
    }

    @Override
    public void span(String tensor, String phase, long startNanos, long endNanos) {
        timeline.span(prefix + tensor, phase, startNanos, endNanos);
    }

    @Override
    public void span(String tensor, String phase, long startNanos, long endNanos, String transport) {
        timeline.span(prefix + tensor, phase, startNanos, endNanos, transport);
    }

    @Override
    public void instant(String tensor, String what, long atNanos) {
        timeline.instant(prefix + tensor, what, atNanos);
    }

    /** The worker's timeline is closed by the worker. */
    @Override
    public void close() {
    }
}
