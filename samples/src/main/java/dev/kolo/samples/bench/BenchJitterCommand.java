package dev.kolo.samples.bench;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.NpOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench jitter -np N}: ranks that reach each step at different times, as workers of uneven speed do.
 * Every step each rank allreduces 5 tensors of 4 B to 1 MiB asynchronously, waits for them, then sleeps 0 to
 * {@code --max-sleep-ms} at random (its own seed). A peer's round message that arrives while a rank sleeps
 * must be answered as soon as the rank is back, not when a wait ends by its deadline: the worst step shows it.
 * With {@code --tls} the workers use TLS from {@code KOLO_TLS_CERT}, {@code KOLO_TLS_KEY} and {@code KOLO_TLS_CA},
 * which must then be set; without it they run plaintext even when those are set.
 */
@Command(name = "jitter", description = "Steps of 5 tensors with random sleeps between them, over N local "
        + "worker processes, with or without TLS.", mixinStandardHelpOptions = true,
        versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchJitterCommand implements Callable<Integer> {
    /** Float32 elements of the 5 tensors: 4 B, 1 KiB, 64 KiB, 256 KiB, 1 MiB. */
    private static final int[] ELEMENTS = {1, 256, 16 << 10, 64 << 10, 256 << 10};
    private static final int WARMUP_STEPS = 2;

    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--steps", paramLabel = "N", defaultValue = "400",
            description = "Timed steps, after " + WARMUP_STEPS + " warm-up steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--max-sleep-ms", paramLabel = "MS", defaultValue = "30",
            description = "Each rank sleeps 0 to this many ms between steps (default: ${DEFAULT-VALUE}).")
    int maxSleepMs;

    @Option(names = "--tls", description = "Run the data plane and event bus over TLS (needs KOLO_TLS_CERT, "
            + "KOLO_TLS_KEY and KOLO_TLS_CA in the environment).")
    boolean tls;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() {
        if (steps < 1 || maxSleepMs < 0) {
            throw new IllegalArgumentException("--steps must be at least 1 and --max-sleep-ms at least 0");
        }
        if (tls) {
            for (String name : List.of("KOLO_TLS_CERT", "KOLO_TLS_KEY", "KOLO_TLS_CA")) {
                String v = System.getenv(name);
                if (v == null || v.isBlank()) {
                    throw new IllegalArgumentException("--tls needs " + name + " in the environment");
                }
            }
        }
        return role.isWorker() ? runWorker() : role.launch("jitter", workers.np());
    }


    private int runWorker() {
        KoloConfig.Builder b = KoloConfig.builderFromEnvironment().metricsPort(0);
        if (!tls) {
            b.set(Settings.TLS_CERT, null).set(Settings.TLS_KEY, null).set(Settings.TLS_CA, null);
        }
        try (Kolo kolo = BenchWorkers.joinJob(b)) {
            Random random = new Random(1_000_003L * kolo.rank() + 17);
            List<Tensor> grads = new ArrayList<>();
            for (int n : ELEMENTS) {
                grads.add(Tensor.allocate(DType.FLOAT32, n));
            }
            List<CompletableFuture<Tensor>> pending = new ArrayList<>(ELEMENTS.length);
            long worstNanos = 0;
            long start = 0;
            for (int s = -WARMUP_STEPS; s < steps; s++) {
                if (s == 0) {
                    kolo.barrier();
                    start = System.nanoTime();
                }
                long t0 = System.nanoTime();
                pending.clear();
                for (int i = 0; i < ELEMENTS.length; i++) {
                    pending.add(kolo.allreduceInPlaceAsync("jitter." + i, grads.get(i), ReduceOp.SUM, 1.0, 1.0));
                }
                pending.forEach(CompletableFuture::join);
                if (s >= 0) {
                    worstNanos = Math.max(worstNanos, System.nanoTime() - t0);
                }
                // The uneven arrival this bench is about: a real pause, not a stand-in for a condition.
                TimeUnit.MICROSECONDS.sleep(random.nextInt(maxSleepMs * 1000 + 1));
            }
            double total = (System.nanoTime() - start) / 1e9;
            double[] slowest = kolo.allreduce("jitter.result", Tensor.of(new double[] {total, worstNanos / 1e6}, 2),
                    ReduceOp.MAX).toDoubleArray();
            if (kolo.rank() == 0) {
                if (role.json()) {
                    System.out.printf(Locale.ROOT, "{\"bench\":\"jitter\",\"np\":%d,\"tls\":%b,\"steps\":%d,"
                            + "\"total_s\":%.3f,\"worst_step_ms\":%.3f}%n", kolo.size(), tls, steps, slowest[0],
                            slowest[1]);
                } else {
                    System.out.printf(Locale.ROOT, "| np %d | tls %b | %d steps | total %.3f s | worst step %.3f ms |%n",
                            kolo.size(), tls, steps, slowest[0], slowest[1]);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
        return 0;
    }
}
