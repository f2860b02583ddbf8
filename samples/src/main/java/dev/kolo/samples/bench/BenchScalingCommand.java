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
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench scaling -np N}: a synthetic data-parallel training step. The compute of a step is simulated
 * by sleeping ({@code --compute-ms}, a third forward, two thirds backward); during the backward part the 161
 * ResNet-50 gradients (25.6 M parameters) are released in backward order, each when its share of the
 * backward time (by parameter count) has elapsed, and allreduced (AVERAGE, in place) while the rest of the
 * backward "runs". The step ends when every gradient is averaged. Runs np 1, then np N, in the same
 * invocation, and reports the median step time and scaling efficiency T(1)/T(N).
 */
@Command(name = "scaling", description = "Data-parallel scaling: a ResNet-50-shaped step with simulated compute, "
        + "np 1 against np N.", mixinStandardHelpOptions = true, versionProvider = KoloVersion.class,
        sortOptions = false)
public final class BenchScalingCommand implements Callable<Integer> {
    private static final Pattern RESULT = Pattern.compile("\\{\"bench\":\"scaling\",\"np\":(\\d+),\"step_ms\":([0-9.]+)}");

    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--compute-ms", paramLabel = "MS", defaultValue = "200",
            description = "Simulated compute per step (default: ${DEFAULT-VALUE}).")
    double computeMs;

    @Option(names = "--steps", paramLabel = "N", defaultValue = "20",
            description = "Timed steps per job size, after 3 warm-up steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--dtype", paramLabel = "TYPE", defaultValue = "float32",
            description = "Gradient type: float32, float16 or bfloat16 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() {
        int np = workers.np();
        if (!(computeMs >= 0) || steps < 1) {
            throw new IllegalArgumentException("--compute-ms must be 0 or more and --steps at least 1");
        }
        DType type = parseType(dtype);
        return role.isWorker() ? runWorker(type) : launchBoth(np);
    }

    private static DType parseType(String text) {
        switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "float32": return DType.FLOAT32;
            case "float16": return DType.FLOAT16;
            case "bfloat16": return DType.BFLOAT16;
            default: throw new IllegalArgumentException("--dtype must be float32, float16 or bfloat16 (got '"
                    + text + "')");
        }
    }

    /** np 1 first (the baseline), then np N; one result line each. */
    private int launchBoth(int np) {
        if (!role.json()) {
            System.out.printf(Locale.ROOT, "| %4s | %10s | %10s |  (ResNet-50 gradients, %s, %.0f ms compute)%n",
                    "np", "step_ms", "efficiency", dtype, computeMs);
        }
        double[] baseline = {Double.NaN};
        int[] sizes = np == 1 ? new int[] {1} : new int[] {1, np};
        for (int n : sizes) {
            double[] stepMs = {Double.NaN};
            List<String> args = role.givenOptions();
            int code = BenchWorkers.start("scaling", n, args, (rank, line) -> {
                Matcher m = RESULT.matcher(line);
                if (rank == 0 && m.matches()) {
                    stepMs[0] = Double.parseDouble(m.group(2));
                } else {
                    System.err.println("[" + rank + "] " + line);
                }
            });
            if (code != 0) {
                return code;
            }
            if (Double.isNaN(stepMs[0])) {
                throw new IllegalStateException("the np " + n + " benchmark job ended without a result");
            }
            if (n == 1) {
                baseline[0] = stepMs[0];
            }
            double efficiency = baseline[0] / stepMs[0];
            if (role.json()) {
                System.out.printf(Locale.ROOT, "{\"bench\":\"scaling\",\"np\":%d,\"step_ms\":%.2f,\"efficiency\":%.4f}%n",
                        n, stepMs[0], efficiency);
            } else {
                System.out.printf(Locale.ROOT, "| %4d | %10.2f | %9.1f%% |%n", n, stepMs[0], efficiency * 100);
            }
            System.out.flush();
        }
        return 0;
    }

    private int runWorker(DType type) {
        try (Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment().metricsPort(0))) {
            List<long[]> shapes = ResNet50Shapes.backwardOrder();
            List<Tensor> grads = new ArrayList<>(shapes.size());
            List<String> names = new ArrayList<>(shapes.size());
            double[] releaseAt = new double[shapes.size()]; // fraction of the backward time
            long total = 0;
            for (long[] shape : shapes) {
                total += ResNet50Shapes.elements(shape);
            }
            long cumulative = 0;
            for (int i = 0; i < shapes.size(); i++) {
                grads.add(Tensor.allocate(type, shapes.get(i)));
                names.add("grad." + i);
                cumulative += ResNet50Shapes.elements(shapes.get(i));
                releaseAt[i] = (double) cumulative / total;
            }
            long computeNanos = Math.round(computeMs * 1e6);
            for (int i = 0; i < 3; i++) {
                step(kolo, grads, names, releaseAt, computeNanos);
            }
            kolo.barrier();
            double[] times = new double[steps];
            for (int i = 0; i < steps; i++) {
                times[i] = step(kolo, grads, names, releaseAt, computeNanos);
            }
            double[] slowest = kolo.allreduce("times", Tensor.of(times, steps), ReduceOp.MAX).toDoubleArray();
            Arrays.sort(slowest);
            if (kolo.rank() == 0) {
                System.out.printf(Locale.ROOT, "{\"bench\":\"scaling\",\"np\":%d,\"step_ms\":%.3f}%n", kolo.size(),
                        slowest[steps / 2] * 1e3);
            }
        }
        return 0;
    }

    /** One step: forward third, then gradients released through the backward two thirds; returns seconds. */
    private static double step(Kolo kolo, List<Tensor> grads, List<String> names, double[] releaseAt,
                               long computeNanos) {
        long start = System.nanoTime();
        long backwardStart = start + computeNanos / 3;
        long backward = computeNanos - computeNanos / 3;
        List<CompletableFuture<Tensor>> pending = new ArrayList<>(grads.size());
        for (int i = 0; i < grads.size(); i++) {
            sleepUntil(backwardStart + Math.round(backward * releaseAt[i]));
            pending.add(kolo.allreduceInPlaceAsync(names.get(i), grads.get(i), ReduceOp.AVERAGE, 1.0, 1.0));
        }
        for (CompletableFuture<Tensor> f : pending) {
            f.join();
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** Sleeps to an absolute deadline, so oversleeping one release does not delay the next ones. */
    private static void sleepUntil(long deadline) {
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }
}
