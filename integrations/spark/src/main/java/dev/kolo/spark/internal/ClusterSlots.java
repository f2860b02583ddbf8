package dev.kolo.spark.internal;

import java.time.Duration;
import org.apache.spark.SparkContext;

/**
 * The check that a barrier stage of n tasks can start: Spark's own check at job submission, when it fails, retries
 * every 15 s up to 40 times ({@code spark.scheduler.barrier.maxConcurrentTasksCheck.*}), so a stage too large for
 * the cluster would wait for ten minutes before its error; this one fails within a short wait and names the fix.
 */
public final class ClusterSlots {
    private ClusterSlots() {
    }

    /**
     * Waits until the cluster has at least {@code n} task slots (executors may still be registering), at most
     * {@code wait}.
     *
     * @throws IllegalArgumentException if it has fewer then, saying how many and what to change
     */
    public static void require(SparkContext sc, int n, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        int slots;
        while ((slots = slots(sc)) < n && System.nanoTime() < deadline) {
            // Executors register asynchronously and no public listener reports slots: poll the scheduler.
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for executors", e);
            }
        }
        if (slots < n) {
            int executors = Math.max(0, sc.statusTracker().getExecutorInfos().length - (sc.isLocal() ? 0 : 1));
            throw new IllegalArgumentException("numProcesses(" + n + ") needs " + n + " task slots at once (one "
                    + "task per rank, all in one barrier stage), but the cluster has " + slots + " (" + executors
                    + " executor(s), spark.task.cpus=" + sc.getConf().get("spark.task.cpus", "1") + ", waited "
                    + wait.toSeconds() + " s for more): lower numProcesses to at most " + slots + ", or give the "
                    + "application more executors or cores (spark.executor.instances, spark.executor.cores, "
                    + "spark.cores.max), or lower spark.task.cpus");
        }
    }

    /** Tasks the cluster can run at once with the default resource profile (a private[spark] method, public in bytecode). */
    static int slots(SparkContext sc) {
        return sc.maxNumConcurrentTasks(sc.resourceProfileManager().defaultResourceProfile());
    }
}
