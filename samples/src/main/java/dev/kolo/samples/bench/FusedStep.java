package dev.kolo.samples.bench;

import static dev.kolo.samples.bench.SlowestRankTimes.mediansOfSlowest;
import static dev.kolo.samples.bench.SlowestRankTimes.slowestRank;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * The last part of {@code bench allreduce}: a ResNet-50-shaped step of 161 gradients submitted back to back, against
 * one allreduce of the same bytes, and their ratio, which says what fusion costs or saves. Apart from the timing of
 * sizes because it has its own warm-up, its own buffers and its own result line.
 */
final class FusedStep {
    private FusedStep() {
    }

    /**
     * Least warm-up of the fused step before it is timed. Its code (fusion, buffers of many tensors, 161 futures)
     * is not what the sizes above warmed: measured at np 2 over shared memory, a step settles only after some 75
     * steps (about 4 s) from 60-80 ms to 26-35 ms, while the JIT still compiles. A training job runs thousands of
     * steps; the first seconds of a JVM are not what the ratio is for.
     */
    static final double STEP_WARM_UP_SECONDS = 6;

    /**
     * Float32 tensors of {@code shapes} laid one after the other over {@code whole}'s bytes, from its start. The fused
     * step's gradients are such views of the single allreduce's buffer, so that both ops run over the same memory: on
     * this kind of machine a buffer's place alone moved a large allreduce's time by up to a fifth (whichever of two
     * equal buffers was allocated first ran slower, docs/PERFORMANCE.md), which the ratio must not measure.
     */
    static List<Tensor> gradientViews(Tensor whole, List<long[]> shapes) {
        List<Tensor> views = new ArrayList<>(shapes.size());
        ByteBuffer bytes = whole.data();
        int at = 0;
        for (long[] shape : shapes) {
            int length = Math.toIntExact(DType.FLOAT32.byteSize() * ResNet50Shapes.elements(shape));
            views.add(Tensor.wrap(DType.FLOAT32, bytes.slice(at, length), shape));
            at += length;
        }
        return views;
    }

    /**
     * 161 ResNet-50 gradients submitted back to back, against one allreduce of the same bytes (the gradients are
     * views of its buffer, {@link #gradientViews}): both warmed for {@link #STEP_WARM_UP_SECONDS} at least, then
     * timed alternately, a step and a single allreduce, each after a barrier, so that a stretch of slow copies
     * (large allreduces over shared memory run up to 4 times slower for seconds at a time, docs/PERFORMANCE.md)
     * touches both alike, where one beginning or ending between a block of steps and a block of single allreduces
     * would skew the ratio; each is the median of the slowest rank's times, over two budgets in all.
     *
     * @param warmUpSeconds the warm-up of the sizes ({@code --warmup}); the step takes at least
     *        {@link #STEP_WARM_UP_SECONDS}
     * @param budget {@code --budget}: the step and the single allreduce are timed over two of them
     * @param json whether rank 0 prints a JSON object rather than a table row
     */
    static void run(Kolo kolo, double warmUpSeconds, double budget, boolean json) {
        int n = kolo.size();
        List<long[]> shapes = ResNet50Shapes.backwardOrder();
        long total = 0;
        for (long[] shape : shapes) {
            total += ResNet50Shapes.elements(shape);
        }
        Tensor single = Tensor.allocate(DType.FLOAT32, total);
        List<Tensor> grads = gradientViews(single, shapes);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < shapes.size(); i++) {
            names.add("grad." + i);
        }
        Runnable stepOp = () -> {
            List<CompletableFuture<Tensor>> pending = new ArrayList<>(grads.size());
            for (int i = 0; i < grads.size(); i++) {
                pending.add(kolo.allreduceInPlaceAsync(names.get(i), grads.get(i), ReduceOp.SUM, 1.0, 1.0));
            }
            pending.forEach(CompletableFuture::join);
        };
        Runnable singleOp = () -> kolo.allreduceInPlace("single", single, ReduceOp.SUM);
        double warm = Math.max(warmUpSeconds, STEP_WARM_UP_SECONDS);
        double stepProbe = warmUp(kolo, "step", stepOp, warm);
        double singleProbe = warmUp(kolo, "single", singleOp, warm / 4);
        int pairs = (int) Math.max(5, Math.min(1000, 2 * budget / (stepProbe + singleProbe)));
        double[] medians = mediansOfSlowest(kolo, "step.times", new Runnable[] {stepOp, singleOp}, pairs);
        double step = medians[0];
        double one = medians[1];
        if (kolo.rank() == 0) {
            long bytes = total * 4;
            if (json) {
                System.out.printf(Locale.ROOT, "{\"bench\":\"allreduce_fused_step\",\"np\":%d,\"tensors\":%d,"
                        + "\"bytes\":%d,\"step_ms\":%.2f,\"single_ms\":%.2f,\"ratio\":%.3f}%n",
                        n, shapes.size(), bytes, step * 1e3, one * 1e3, step / one);
            } else {
                System.out.printf(Locale.ROOT, "| fused step: %d tensors, %d bytes: %.2f ms per step, one allreduce of "
                        + "the same bytes %.2f ms, ratio %.3f |%n", shapes.size(), bytes, step * 1e3, one * 1e3, step / one);
            }
        }
    }

    /**
     * Runs {@code op} for about {@code seconds} (a count every rank derives from the slowest rank's probe, so all run
     * it alike). @return the slowest rank's time of one op after the warm-up
     */
    private static double warmUp(Kolo kolo, String name, Runnable op, double seconds) {
        double probe = probe(kolo, name + ".probe0", op);
        int count = (int) Math.min(MAX_STEP_WARM_UP_OPS, Math.ceil(seconds / Math.max(probe, 1e-6)));
        for (int i = 0; i < count; i++) {
            op.run();
        }
        return probe(kolo, name + ".probe1", op);
    }

    /** Most ops of a warm-up of the fused step or its single allreduce. */
    static final int MAX_STEP_WARM_UP_OPS = 2000;

    /** One op after a barrier; @return the slowest rank's time of it */
    private static double probe(Kolo kolo, String name, Runnable op) {
        kolo.barrier();
        long t0 = System.nanoTime();
        op.run();
        double once = (System.nanoTime() - t0) / 1e9;
        return slowestRank(kolo, name, once);
    }
}
