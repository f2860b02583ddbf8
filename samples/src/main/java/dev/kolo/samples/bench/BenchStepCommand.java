package dev.kolo.samples.bench;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.NpOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench step -np N}: the ResNet-50-shaped step (161 float32 gradients submitted back to back in backward
 * order, SUM in place, then waited for) run {@code --steps} times in a row from the job's start, as a training
 * loop runs them, with whatever settings the environment gives ({@code KOLO_FUSION_THRESHOLD},
 * {@code KOLO_CYCLE_TIME}, {@code KOLO_AUTOTUNE}, ...): the slowest rank's time of every step, so that a tuner's
 * path and a grid of settings compare step for step.
 */
@Command(name = "step", description = "The ResNet-50-shaped step, repeated from the job's start: per-step times.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchStepCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--steps", paramLabel = "N", defaultValue = "300",
            description = "Steps to run (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--per-step", description = "Also print every step's time (a line each).")
    boolean perStep;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    /** Steps summarised at the end: the last ones, after any tuning and warm-up. */
    static final int LAST = 50;

    @Override
    public Integer call() {
        if (steps < LAST) {
            throw new IllegalArgumentException("--steps must be at least " + LAST);
        }
        if (!role.isWorker()) {
            return role.launch("step", workers.np());
        }
        try (Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment())) {
            List<long[]> shapes = ResNet50Shapes.backwardOrder();
            List<Tensor> grads = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (int i = 0; i < shapes.size(); i++) {
                grads.add(Tensor.allocate(DType.FLOAT32, shapes.get(i)));
                names.add("grad." + i);
            }
            double[] times = new double[steps];
            List<CompletableFuture<Tensor>> pending = new ArrayList<>(grads.size());
            for (int s = 0; s < steps; s++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < grads.size(); i++) {
                    pending.add(kolo.allreduceInPlaceAsync(names.get(i), grads.get(i), ReduceOp.SUM, 1.0, 1.0));
                }
                for (CompletableFuture<Tensor> f : pending) {
                    kolo.await(f, "step " + s);
                }
                pending.clear();
                times[s] = (System.nanoTime() - t0) / 1e6;
            }
            double[] slowest = kolo.allreduce("bench.step.times", Tensor.of(times, steps), ReduceOp.MAX)
                    .toDoubleArray();
            if (kolo.rank() == 0) {
                report(kolo.size(), slowest);
            }
        }
        return 0;
    }

    private void report(int n, double[] slowest) {
        if (perStep) {
            for (int s = 0; s < slowest.length; s++) {
                System.out.printf(Locale.ROOT, role.json() ? "{\"bench\":\"step\",\"np\":%d,\"step\":%d,\"step_ms\":%.3f}%n"
                        : "| step %2$5d | %3$10.3f ms |%n", n, s + 1, slowest[s]);
            }
        }
        double first = median(slowest, 0, Math.min(20, slowest.length));
        double at200 = slowest.length >= 200 ? median(slowest, 180, 200) : Double.NaN;
        double last = median(slowest, slowest.length - LAST, slowest.length);
        if (role.json()) {
            System.out.printf(Locale.ROOT, "{\"bench\":\"step_summary\",\"np\":%d,\"steps\":%d,\"first20_ms\":%.3f,"
                    + "\"steps181to200_ms\":%.3f,\"last%d_ms\":%.3f}%n", n, slowest.length, first, at200, LAST, last);
        } else {
            System.out.printf(Locale.ROOT, "| np %d, %d steps: median of steps 1-20 %.2f ms, of 181-200 %.2f ms, of the "
                    + "last %d %.2f ms |%n", n, slowest.length, first, at200, LAST, last);
        }
    }

    /** @return the median of {@code v[from, to)} */
    static double median(double[] v, int from, int to) {
        double[] part = Arrays.copyOfRange(v, from, to);
        Arrays.sort(part);
        int k = part.length;
        return k % 2 == 1 ? part[k / 2] : (part[k / 2 - 1] + part[k / 2]) / 2;
    }
}
