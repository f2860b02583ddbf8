package dev.kolo.samples.mnist;

import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.data.ElasticSampler;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.train.UpdateRule;
import java.time.Duration;

/**
 * Everything a training run must keep to continue elsewhere, registered in an {@link ElasticState}: the
 * model's parameters (live arrays), its buffers (BatchNorm's running statistics), the update rule's state ({@code <parameter>.velocity} for
 * SGD; {@code .m}, {@code .v}, {@code .step} for the Adam family), the sampler's position ({@code sampler.position}:
 * the epoch, the examples of it used, the seed of its shuffles; see {@link ElasticSampler}) and the value
 * {@value #STEP} (optimizer steps done, over the whole run). None of it depends on the number of workers, so a job
 * may resume or continue with another size.
 *
 * <p>The state is committed every {@code --commit-every} steps; every
 * {@link TrainSettings#checkpointEveryCommits()}-th commit rank 0 writes to the checkpoint directory
 * (stamped with the commit count; the step is the value {@value #STEP}). Without a directory nothing is
 * written, and commits only serve the rollback of an elastic job.
 */
final class TrainingState implements AutoCloseable {
    static final String STEP = "step";

    private final ElasticState state;

    /**
     * @param leaveTimeout how long the worker's shutdown hook waits for the loop to leave (the hook is the worker's,
     *        so the state's own is off)
     */
    TrainingState(Kolo kolo, SampleModel model, UpdateRule rule, ElasticSampler sampler, TrainSettings s,
            Duration leaveTimeout) {
        ElasticState.Builder b = ElasticState.builder(kolo).checkpointEvery(s.checkpointEveryCommits())
                // The worker's own shutdown hook asks to leave and decides the exit status (see WorkerCommand).
                .leaveOnSigterm(false, leaveTimeout);
        if (s.checkpointDir() != null) {
            b.checkpointDirectory(s.checkpointDir());
        }
        state = b.build();
        state.parameters(model.parameters()).updateRule(rule, model.parameters());
        model.register(state);
        sampler.register(state);
        state.value(STEP, 0L);
    }

    ElasticState elastic() {
        return state;
    }

    /** Leave an elastic job at the next commit, or stop a fixed one at the next step (thread-safe; from a hook). */
    void requestLeave() {
        state.requestLeave();
    }

    /** Waits for a checkpoint being written, then closes the stores. */
    @Override
    public void close() {
        state.close();
    }
}
