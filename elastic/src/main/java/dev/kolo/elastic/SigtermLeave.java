package dev.kolo.elastic;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shutdown hook (SIGTERM, SIGINT) that turns the JVM's exit into a graceful leave: it asks to leave at
 * the next commit and holds the exit until the training thread has left (its state committed, its
 * {@code Kolo} closed) or the timeout passed. Removed when the run ends.
 */
final class SigtermLeave implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SigtermLeave.class);

    private final CountDownLatch done = new CountDownLatch(1);
    private final Thread hook;
    private volatile boolean triggered;

    SigtermLeave(ElasticState state, Duration timeout) {
        this.hook = new Thread(() -> {
            triggered = true;
            LOG.warn("shutting down: leaving the job at the next commit (waiting at most {} s)", timeout.toSeconds());
            state.requestLeave();
            try {
                if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("no commit within {} s: exiting without a graceful leave (the others roll back)",
                            timeout.toSeconds());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "kolo-elastic-leave");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** @return true once the JVM is shutting down and this hook asked to leave */
    boolean triggered() {
        return triggered;
    }

    /** The run is over (left, finished or failed): release the hook and remove it if not yet running. */
    @Override
    public void close() {
        done.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook is running and now returns
        }
    }
}
