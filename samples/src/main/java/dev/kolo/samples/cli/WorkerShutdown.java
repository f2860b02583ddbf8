package dev.kolo.samples.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The worker's shutdown hook (SIGTERM, Ctrl-C, a launcher that went away). While the worker still runs, it asks the
 * training loop to end gracefully and waits (at most {@code timeout}) for it; the process then exits with the worker's
 * own status instead of the signal's 143:
 * <ul>
 *   <li>elastic job: the worker leaves at its next commit, the others going on without rollback (status 0);</li>
 *   <li>fixed job: every worker stops at the next step boundary, that step checkpointed (status
 *       {@value dev.kolo.elastic.ElasticJobFailedException#STOPPED_STATUS}); the restarted job resumes from it.</li>
 * </ul>
 * Once the worker has finished by itself the hook does nothing, so a failing worker exits at once.
 */
final class WorkerShutdown implements AutoCloseable {
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread hook;
    private volatile int status = 1;

    /**
     * @param end asks the training loop to leave at its next commit (elastic) or to stop at its next step (fixed)
     * @param elastic whether the job is elastic (what the messages say)
     */
    WorkerShutdown(Runnable end, boolean elastic, Duration timeout, PrintStream err) {
        this.hook = new Thread(() -> {
            if (finished.getCount() == 0) {
                return;
            }
            err.println("kolo: shutting down: " + (elastic ? "leaving the job at the next commit"
                    : "stopping the job at the next step, checkpointed") + " (waiting at most " + timeout.toSeconds()
                    + " s)");
            err.flush();
            end.run();
            try {
                if (finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.out.flush();
                    err.flush();
                    // The JVM would exit with 128 + the signal; a worker that ended as asked succeeded.
                    Runtime.getRuntime().halt(status);
                }
                err.println("kolo: no " + (elastic ? "commit" : "step boundary") + " within " + timeout.toSeconds()
                        + " s: exiting " + (elastic ? "without a graceful leave (the others roll back to their last "
                        + "commit)" : "without a checkpoint of the last step"));
                err.flush();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "kolo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** The worker is done (finished, left or failed) and exits with {@code exitStatus}. */
    void finished(int exitStatus) {
        this.status = exitStatus;
        finished.countDown();
    }

    /** Removes the hook if the JVM is not shutting down yet. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or about to: finished() lets it return
        }
    }
}
