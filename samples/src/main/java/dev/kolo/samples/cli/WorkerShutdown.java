package dev.kolo.samples.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The worker's shutdown hook (SIGTERM, Ctrl-C, a launcher that went away). While the worker still runs:
 * <ul>
 *   <li>elastic job: asks to leave at the next commit, then waits (at most {@code timeout}) for the training
 *       loop to leave; the others go on without rollback, and the process exits with the worker's own status
 *       (0 after a graceful leave) instead of the signal's 143;</li>
 *   <li>fixed job: leaves the cluster at once (the others stop and a restart resumes from a checkpoint).</li>
 * </ul>
 * Once the worker has finished by itself the hook does nothing, so a failing worker exits at once.
 */
final class WorkerShutdown implements AutoCloseable {
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread hook;
    private volatile int status = 1;

    /**
     * @param leave asks the training loop to leave at its next commit (elastic) or closes the worker (fixed)
     * @param graceful true for an elastic job: wait for the leave, then exit with the worker's status
     */
    WorkerShutdown(Runnable leave, boolean graceful, Duration timeout, PrintStream err) {
        this.hook = new Thread(() -> {
            if (finished.getCount() == 0) {
                return;
            }
            if (!graceful) {
                leave.run();
                return;
            }
            err.println("kolo: shutting down: leaving the job at the next commit (waiting at most "
                    + timeout.toSeconds() + " s)");
            err.flush();
            leave.run();
            try {
                if (finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.out.flush();
                    err.flush();
                    // The JVM would exit with 128 + the signal; a worker that left as asked succeeded.
                    Runtime.getRuntime().halt(status);
                }
                err.println("kolo: no commit within " + timeout.toSeconds() + " s: exiting without a graceful "
                        + "leave (the others roll back to their last commit)");
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
