package dev.kolo.runtime.internal.observability;

/**
 * Records what happens to each tensor for a Chrome-trace timeline ({@code KOLO_TIMELINE}). The disabled
 * timeline is a constant whose methods do nothing, so the cost when off is a virtual call on a monomorphic
 * site, which the JIT reduces to a branch.
 */
public interface Timeline extends AutoCloseable {
    Timeline OFF = new Timeline() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public void span(String tensor, String phase, long startNanos, long endNanos) {
        }

        @Override
        public void instant(String tensor, String what, long atNanos) {
        }

        @Override
        public void close() {
        }
    };

    boolean enabled();

    /** A phase of {@code tensor} from {@code startNanos} to {@code endNanos} ({@link System#nanoTime()}). */
    void span(String tensor, String phase, long startNanos, long endNanos);

    /** A data-plane phase, naming how its bytes moved ({@code DataPlane.transport()}: shm, tcp, ...). */
    default void span(String tensor, String phase, long startNanos, long endNanos, String transport) {
        span(tensor, phase, startNanos, endNanos);
    }

    /** A moment on {@code tensor}'s track, e.g. a rank becoming ready. */
    void instant(String tensor, String what, long atNanos);

    @Override
    void close();
}
