package dev.kolo.samples.mnist;

import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.checkpoint.RestoredCheckpoint;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.Sgd;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Commits the training state (parameters, momentum, step) every few steps and resumes from the latest
 * commit. Rank 0 writes and restores; the others receive the restored state by broadcast, so workers need
 * not share a file system.
 */
final class TrainingCheckpoints implements AutoCloseable {
    private final Kolo kolo;
    private final Checkpointer checkpointer;
    private final PrintStream out;

    TrainingCheckpoints(Kolo kolo, Path dir, PrintStream out) {
        this.kolo = kolo;
        this.out = out;
        this.checkpointer = Checkpointer.builder().job("fashion-mnist").directory(dir).rank(kolo.rank())
                .meterRegistry(kolo.meterRegistry()).build();
    }

    /**
     * Loads the latest commit into the model and optimizer on rank 0 and tells every rank its step.
     * (Call {@code broadcastParameters(0)} afterwards; the momentum is broadcast here.)
     *
     * @return the step to continue from, 0 without a checkpoint
     */
    long resume(Mlp model, Sgd sgd) {
        long step = 0;
        if (kolo.rank() == 0) {
            Optional<RestoredCheckpoint> restored = checkpointer.restoreLatest();
            if (restored.isPresent()) {
                CheckpointState state = restored.get().state();
                for (Parameter p : model.parameters()) {
                    copy(state, p.name(), p.values());
                    copy(state, p.name() + ".momentum", sgd.velocity(p));
                }
                step = state.step();
            }
        }
        step = kolo.broadcast("checkpoint.step", Tensor.of(new long[] {step}, 1), 0).toLongArray()[0];
        if (step > 0) {
            for (Parameter p : model.parameters()) {
                float[] v = sgd.velocity(p);
                kolo.broadcast("checkpoint.momentum." + p.name(), Tensor.of(v, v.length), 0).buffer().asFloatBuffer()
                        .get(v);
            }
        }
        return step;
    }

    private static void copy(CheckpointState state, String name, float[] into) {
        Tensor t = state.tensor(name);
        if (t.numElements() != into.length) {
            throw new IllegalArgumentException("checkpoint tensor '" + name + "' has " + t.numElements()
                    + " elements but the model needs " + into.length + "; was it written by a different model?");
        }
        t.buffer().asFloatBuffer().get(into);
    }

    /** Commits the state after {@code step} steps; written in the background (rank 0 only). */
    void commit(long step, int epoch, Mlp model, Sgd sgd) {
        if (kolo.rank() != 0) {
            return;
        }
        CheckpointState.Builder b = CheckpointState.builder(step).epoch(epoch).generation(kolo.generation())
                .worldSize(kolo.size());
        for (Parameter p : model.parameters()) {
            b.tensor(p.name(), Tensor.of(p.values(), p.shape()));
            b.tensor(p.name() + ".momentum", Tensor.of(sgd.velocity(p), p.shape()));
        }
        checkpointer.save(b.build()).whenComplete((r, e) -> {
            if (e != null) {
                out.println("checkpoint: step " + step + " failed: " + e.getMessage());
            }
        });
    }

    void awaitSaves() {
        checkpointer.awaitSaves();
    }

    @Override
    public void close() {
        checkpointer.close();
    }
}
