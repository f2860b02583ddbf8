package dev.kolo.spark;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.spark.BarrierTaskContext;

/**
 * A training that checkpoints every commit and, in its stage's first attempt, has rank 1 announce its executor's pid
 * at step {@value #ANNOUNCE_AT} and then wait to be killed: {@link StandaloneClusterTest} SIGKILLs that executor. Its
 * result on rank 0: {step the last attempt started from, that attempt, the parameters' sum, every rank's sum}.
 */
record ResumingTraining(String checkpointDir, String pidFile) implements TrainFunction<double[]> {
    static final int STEPS = 40;
    static final int ANNOUNCE_AT = 20;

    @Override
    public double[] train(Kolo kolo) {
        int attempt = BarrierTaskContext.get().stageAttemptNumber();
        float[] w = new float[16];
        try (ElasticState state = ElasticState.builder(kolo).checkpointEvery(1)
                .checkpointDirectory(Path.of(checkpointDir)).build()) {
            state.floats("w", w, w.length).value("step", 0L);
            double[] start = new double[1];
            Elastic.run(kolo, state, st -> {
                start[0] = st.longValue("step");
                for (long step = st.longValue("step"); step < STEPS; ) {
                    float[] g = gradient(w, step, kolo.rank());
                    float[] avg = kolo.allreduce("g", Tensor.of(g, g.length), ReduceOp.AVERAGE).toFloatArray();
                    for (int i = 0; i < w.length; i++) {
                        w[i] -= 0.1f * avg[i];
                    }
                    st.set("step", ++step);
                    if (step % 5 == 0) {
                        st.commit();
                    }
                    if (attempt == 0 && kolo.rank() == 1 && step == ANNOUNCE_AT) {
                        st.finishCheckpoints(); // the test kills once the step's checkpoint is on disk
                        announceAndWait();
                    }
                }
                return null;
            });
            double sum = 0;
            for (float v : w) {
                sum += v;
            }
            double[] sums = kolo.allgather("sum", Tensor.of(new double[] {sum}, 1)).toDoubleArray();
            double[] out = Arrays.copyOf(new double[] {start[0], attempt, sum}, 3 + sums.length);
            System.arraycopy(sums, 0, out, 3, sums.length);
            return out;
        }
    }

    /** What every rank's step computes: the same arithmetic in every attempt, so a resumed run ends bit-equal. */
    static float[] gradient(float[] w, long step, int rank) {
        float[] g = new float[w.length];
        for (int i = 0; i < g.length; i++) {
            g[i] = w[i] - (float) Math.sin(step + i + rank);
        }
        return g;
    }

    /** The parameters' sum of a run of two ranks that nothing interrupts, computed here. */
    static double uninterrupted() {
        float[] w = new float[16];
        for (long step = 0; step < STEPS; step++) {
            float[] a = gradient(w, step, 0);
            float[] b = gradient(w, step, 1);
            for (int i = 0; i < w.length; i++) {
                w[i] -= 0.1f * ((a[i] + b[i]) / 2);
            }
        }
        double sum = 0;
        for (float v : w) {
            sum += v;
        }
        return sum;
    }

    private void announceAndWait() {
        try {
            Path tmp = Path.of(pidFile + ".tmp");
            Files.writeString(tmp, Long.toString(ProcessHandle.current().pid()));
            Files.move(tmp, Path.of(pidFile));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // killed here by the test
        }
        throw new IllegalStateException("rank 1 was not killed within 60 s");
    }
}
