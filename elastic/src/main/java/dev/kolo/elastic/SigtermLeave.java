package dev.kolo.elastic;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shutdown hook (SIGTERM, SIGINT) that turns the JVM's exit into a graceful end and holds the exit until the
 * training thread is done or the timeout passed: in an elastic job it asks to leave at the next commit (the others go
 * on without rollback); in a fixed job it asks the job to stop at the next step boundary with that step checkpointed
 * ({@link ElasticState#stepDone()}), so that the restarted job loses nothing. Removed when the run ends.
 */
final class SigtermLeave implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SigtermLeave.class);

    private final CountDownLatch done = new CountDownLatch(1);
    private final Thread hook;
    private volatile boolean triggered;

    SigtermLeave(ElasticState state, Duration timeout, boolean elastic) {
        this.hook = new Thread(() -> {
            triggered = true;
            LOG.warn(elastic ? "shutting down: leaving the job at the next commit (waiting at most {} s)"
                    : "shutting down: stopping the job at the next step, checkpointed (waiting at most {} s)",
                    timeout.toSeconds());
            state.requestLeave();
            if (!elastic && !state.steps.used()) {
                LOG.warn("the training loop marks no steps (ElasticState.stepDone()): exiting without a checkpoint");
                return;
            }
            try {
                if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn(elastic ? "no commit within {} s: exiting without a graceful leave (the others roll back)"
                            : "no step boundary within {} s: exiting without a checkpoint of the last step",
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
