package dev.kolo.elastic;

import dev.kolo.runtime.Kolo;
import java.util.Objects;
import java.util.function.Function;

/**
 * Runs a training function so that it survives lost workers and changes of membership.
 *
 * <p>{@code run} first synchronizes the state (every rank starts from the same bytes: the newest commit
 * any rank holds, else the newest valid checkpoint, else rank 0's initial state), then calls
 * {@code trainFn}. In an elastic job ({@code KOLO_MIN_NP} below {@code KOLO_MAX_NP}):
 * <ul>
 *   <li>a lost worker ({@link dev.kolo.runtime.WorkerLostException} anywhere in {@code trainFn}): the
 *       survivors restore the last commit, agree on a new generation ({@link Kolo#rejoin()}: at least
 *       {@code KOLO_MIN_NP} workers and a strict majority of the last one, within
 *       {@code KOLO_ELASTIC_TIMEOUT}), synchronize from the new rank 0, run the reset callbacks and call
 *       {@code trainFn} again;</li>
 *   <li>workers waiting to join, or one leaving (SIGTERM): every rank learns it at the same
 *       {@link ElasticState#commit()}; the leaver leaves, the others regroup with the newcomers,
 *       synchronize and go on without rollback;</li>
 *   <li>a worker the blacklist refuses (it failed repeatedly) stops at once.</li>
 * </ul>
 * In a fixed job (the default) a lost worker stops every survivor with an
 * {@link ElasticJobFailedException} naming the lost rank; started again, the workers resume from the
 * newest valid checkpoint. Asked to stop (SIGTERM on any rank: a preemption, a drain), a fixed job stops at a step
 * boundary with that step checkpointed, if the loop calls {@link ElasticState#stepDone()} after each step.
 */
public final class Elastic {
    private Elastic() {
    }

    /**
     * @param kolo this worker (the one {@code state} was built for)
     * @param state the registered training state
     * @param trainFn the training loop; it reads its position from {@code state}, commits it every few
     *     steps, and may be called again after a reset
     * @return what {@code trainFn} returned
     * @throws ElasticJobFailedException if the job cannot go on (message names why; exit non-zero)
     * @throws WorkerLeftException on a worker that left the job at a commit as it asked (exit normally)
     */
    public static <R> R run(Kolo kolo, ElasticState state, Function<ElasticState, R> trainFn) {
        return checked(kolo, state, trainFn).run();
    }

    /**
     * {@link #run} for a worker's {@code main}: if the job cannot go on, prints {@code kolo: <why>} on
     * standard error and exits the JVM with status {@value ElasticJobFailedException#EXIT_STATUS}; a fixed job that
     * stopped as asked (SIGTERM), its last step checkpointed, exits with
     * {@value ElasticJobFailedException#STOPPED_STATUS}; a worker that left as asked exits with status 0. The status
     * is the process's even when a signal started the exit (which would otherwise make it 143).
     */
    public static <R> R runOrExit(Kolo kolo, ElasticState state, Function<ElasticState, R> trainFn) {
        ElasticRun<R> run = checked(kolo, state, trainFn).holdHook();
        try {
            return run.run();
        } catch (ElasticJobFailedException e) {
            System.err.println("kolo: " + e.getMessage());
            // No graceful close: after a failure it may block on a broken cluster; exiting frees everything.
            run.exit(e.exitStatus());
            throw e;
        } catch (WorkerLeftException e) {
            System.out.println("kolo: " + e.getMessage());
            run.exit(0);
            throw e;
        } finally {
            run.releaseHook();
        }
    }

    private static <R> ElasticRun<R> checked(Kolo kolo, ElasticState state, Function<ElasticState, R> trainFn) {
        Objects.requireNonNull(kolo, "kolo");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(trainFn, "trainFn");
        if (state.kolo() != kolo) {
            throw new IllegalArgumentException("the state was built for another Kolo worker");
        }
        return new ElasticRun<>(kolo, state, trainFn);
    }
}
