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
 * {@code bench tensors -np N}: steps of many named tensors, the way a large model's gradients arrive. For each
 * count of {@code --tensors}, every rank submits that many float32 tensors of {@code --elements} elements
 * asynchronously (the same names every step), waits for all of them, and the median step time of the slowest
 * rank is reported with the time per tensor.
 */
@Command(name = "tensors", description = "Time per step of N named tensors, over N local worker processes.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchTensorsCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--tensors", paramLabel = "N,N,...", split = ",", defaultValue = "100,1000,2500,5000,20000",
            description = "Tensors per step, one run each (default: ${DEFAULT-VALUE}).")
    int[] tensors;

    @Option(names = "--elements", paramLabel = "N", defaultValue = "64",
            description = "Float32 elements per tensor (default: ${DEFAULT-VALUE}).")
    int elements;

    @Option(names = "--steps", paramLabel = "N", defaultValue = "10",
            description = "Timed steps per count, after 2 warm-up steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() {
        int np = workers.np();
        if (tensors.length == 0 || Arrays.stream(tensors).anyMatch(n -> n < 1 || n > 1_000_000)) {
            throw new IllegalArgumentException("--tensors must list counts of 1 to 1000000 (got "
                    + Arrays.toString(tensors) + ")");
        }
        if (elements < 0 || elements > 1 << 24 || steps < 1) {
            throw new IllegalArgumentException("--elements must be 0 to " + (1 << 24) + " and --steps at least 1");
        }
        return role.isWorker() ? runWorker() : role.launch("tensors", np);
    }


    private int runWorker() {
        try (Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment().metricsPort(0))) {
            if (!role.json() && kolo.rank() == 0) {
                System.out.printf(Locale.ROOT, "| %8s | %10s | %12s |  (np %d, %d float32 each)%n", "tensors",
                        "step_ms", "per_tensor_us", kolo.size(), elements);
            }
            for (int n : tensors) {
                List<Tensor> grads = new ArrayList<>(n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    grads.add(Tensor.allocate(DType.FLOAT32, elements));
                    names.add("n" + n + ".grad." + i);
                }
                double[] times = new double[steps];
                for (int s = -2; s < steps; s++) {
                    kolo.barrier();
                    long start = System.nanoTime();
                    List<CompletableFuture<Tensor>> pending = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        pending.add(kolo.allreduceInPlaceAsync(names.get(i), grads.get(i), ReduceOp.SUM, 1.0, 1.0));
                    }
                    pending.forEach(CompletableFuture::join);
                    if (s >= 0) {
                        times[s] = (System.nanoTime() - start) / 1e9;
                    }
                }
                double[] slowest = kolo.allreduce("n" + n + ".times", Tensor.of(times, steps), ReduceOp.MAX)
                        .toDoubleArray();
                Arrays.sort(slowest);
                double step = slowest[steps / 2];
                if (kolo.rank() == 0) {
                    if (role.json()) {
                        System.out.printf(Locale.ROOT, "{\"bench\":\"tensors\",\"np\":%d,\"tensors\":%d,\"elements\":%d,"
                                + "\"step_ms\":%.3f,\"per_tensor_us\":%.3f}%n", kolo.size(), n, elements, step * 1e3,
                                step * 1e6 / n);
                    } else {
                        System.out.printf(Locale.ROOT, "| %8d | %10.3f | %12.3f |%n", n, step * 1e3, step * 1e6 / n);
                    }
                }
            }
        }
        return 0;
    }
}
