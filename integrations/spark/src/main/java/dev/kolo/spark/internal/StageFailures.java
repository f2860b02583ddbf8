package dev.kolo.spark.internal;

import dev.kolo.spark.RankFailedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The first rank failure of one run's stages, seen on the driver. Spark aborts a failed barrier stage with a
 * message of its own ("barrier task ResultTask(1, 0) finished unsuccessfully") that carries neither the task's
 * exception nor its partition, so the distributor listens for the failed tasks itself: the task's index is the
 * rank, and the failure's description is what the rank threw.
 *
 * <p>A rank's own failure (anything but a peer lost with its executor) cancels the run's job at once: Spark would
 * run a failed map stage again, and the same function on the same input fails the same way.
 */
public final class StageFailures extends SparkListener implements AutoCloseable {
    /** The local property naming the run a job belongs to (a random id: visible in the event log, harmlessly). */
    public static final String RUN_PROPERTY = "kolo.spark.run";

    private final SparkContext sc;
    private final String run;
    private final int size;
    private final Set<Integer> stages = new HashSet<>();
    private final Map<Integer, Integer> jobOfStage = new HashMap<>();
    /** Failures in the order their events arrived. */
    private final List<RankFailedException> failures = new ArrayList<>();
    /** Ended tasks per stage attempt ("stage.attempt"). */
    private final Map<String, Integer> ended = new HashMap<>();

    /** Starts listening for the jobs of {@code run}. */
    public StageFailures(SparkContext sc, String run, int size) {
        this.sc = sc;
        this.run = run;
        this.size = size;
        sc.addSparkListener(this);
    }

    @Override
    public synchronized void onJobStart(SparkListenerJobStart start) {
        if (start.properties() != null && run.equals(start.properties().getProperty(RUN_PROPERTY))) {
            for (Object id : CollectionConverters.asJava(start.stageIds())) {
                stages.add((Integer) id);
                jobOfStage.put((Integer) id, start.jobId());
            }
        }
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
        if (!stages.contains(end.stageId())) {
            return;
        }
        ended.merge(end.stageId() + "." + end.stageAttemptId(), 1, Integer::sum);
        if (end.reason() instanceof ExceptionFailure f) {
            // The rank's own exception when Spark could deserialize it here, else its description.
            Throwable cause = f.exception().isDefined() ? f.exception().get() : new RuntimeException(f.description());
            RankFailedException failure = cause instanceof RankFailedException r ? r : new RankFailedException(
                    end.taskInfo().index(), size, end.taskInfo().executorId(), end.taskInfo().host(), cause);
            failures.add(failure);
            if (!lostPeer(failure)) {
                // Posted to the scheduler's queue: returns at once, safe on the listener's thread.
                sc.cancelJob(jobOfStage.get(end.stageId()), "rank " + failure.rank() + " failed: " + cause);
            }
        }
        notifyAll();
    }

    /**
     * The rank whose failure started it: when one rank throws, the others fail too (their peer closed) and their
     * failures may reach the driver first, so this waits until every task of the failed stage attempt has ended
     * (Spark kills the rest; at most {@code wait}) and prefers a failure that is not a lost peer.
     *
     * @return the failed rank, or null when no rank failed (the stage failed otherwise)
     */
    public synchronized RankFailedException firstFailure(Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        long left;
        while (!allEnded() && (left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return failures.stream().filter(f -> !lostPeer(f)).findFirst()
                .orElse(failures.isEmpty() ? null : failures.get(0));
    }

    private boolean allEnded() {
        return !failures.isEmpty() && ended.values().stream().anyMatch(n -> n >= size);
    }

    private static boolean lostPeer(Throwable t) {
        for (Throwable c = t.getCause(); c != null; c = c.getCause()) {
            if (c.getClass().getName().equals("dev.kolo.runtime.WorkerLostException")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        sc.removeSparkListener(this);
    }
}
