package dev.kolo.samples.soak;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.samples.console.Progress;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.NpOption;
import dev.kolo.samples.launch.ParentWatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench soak -np N --minutes M}: training-like steps for M minutes over N local worker processes,
 * every result checked, and each rank's resources (heap after GC, direct and native memory, threads, file
 * descriptors) compared between the end of a warm-up and the end of the run. Any wrong result, error, or
 * growth beyond {@link SoakBudget}'s tolerances fails the run with a non-zero exit and a line saying what.
 */
@Command(name = "soak", description = "Long-running collectives with thousands of small tensors; fails on a wrong "
        + "result, an error, or growth of memory, threads or file descriptors.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchSoakCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--minutes", paramLabel = "M", defaultValue = "30",
            description = "How long to run, warm-up included (default: ${DEFAULT-VALUE}).")
    double minutes;

    @Option(names = "--small-tensors", paramLabel = "K", defaultValue = "2000",
            description = "Small gradients per step, 64 to 1024 float32 each (default: ${DEFAULT-VALUE}).")
    int smallTensors;

    @Option(names = "--large-mb", paramLabel = "MB", defaultValue = "8",
            description = "Size of each of the two large allreduces per step in MiB (default: ${DEFAULT-VALUE}).")
    int largeMb;

    @Option(names = "--json", description = "One JSON object per line and rank.")
    boolean json;

    @Option(names = "--worker", hidden = true, description = "Run as one worker of the soak job.")
    boolean worker;

    @Override
    public Integer call() {
        int np = workers.np();
        if (!(minutes > 0) || minutes > 7 * 24 * 60) {
            throw new IllegalArgumentException("--minutes must be a positive number of minutes (got " + minutes + ")");
        }
        if (smallTensors < 1 || smallTensors > 100_000) {
            throw new IllegalArgumentException("--small-tensors must be 1..100000 (got " + smallTensors + ")");
        }
        if (largeMb < 1 || largeMb > 512) {
            throw new IllegalArgumentException("--large-mb must be 1..512 (got " + largeMb + ")");
        }
        return worker ? runWorker() : launch(np);
    }

    private int launch(int np) {
        List<String> args = new ArrayList<>(List.of("bench", "soak", "--worker", "-np", Integer.toString(np),
                "--minutes", Double.toString(minutes), "--small-tensors", Integer.toString(smallTensors),
                "--large-mb", Integer.toString(largeMb)));
        if (json) {
            args.add("--json");
        }
        // A fixed heap, touched at start, a small cap on direct memory (reaching it runs the GC that frees dead
        // result tensors, so its high-water mark is reached within the warm-up) and two malloc arenas (direct
        // buffers come from malloc on several threads): resident memory then levels off unless something leaks.
        // On a terminal, a bar of the time run so far with rank 0's latest progress line; the other lines are
        // printed above it. Elsewhere rank 0's progress lines are printed as they come, every 30 s.
        Progress progress = Progress.on(System.err);
        long totalNanos = (long) (minutes * 60e9);
        long t0 = System.nanoTime();
        AtomicReference<String> latest = new AtomicReference<>();
        Thread bar = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (progress.due()) {
                    long elapsed = System.nanoTime() - t0;
                    String text = latest.get();
                    progress.show((double) elapsed / totalNanos, text != null ? text : String.format(Locale.ROOT,
                            "%s%d s of %d s", SoakRun.PROGRESS_PREFIX, elapsed / 1_000_000_000L,
                            totalNanos / 1_000_000_000L));
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "soak-progress");
        bar.setDaemon(true);
        if (progress.interactive()) {
            bar.start();
        }
        Launcher launcher = Launcher.builder("soak-" + UUID.randomUUID().toString().substring(0, 8), np)
                .workerArgs(args).status(progress.linesAbove(System.err)).sink((rank, line) -> {
                    if (progress.interactive() && line.startsWith(SoakRun.PROGRESS_PREFIX)) {
                        latest.set(line);
                    } else {
                        route(progress, rank, line);
                    }
                })
                .jvmFlags(List.of("-Xms384m", "-Xmx384m", "-XX:+AlwaysPreTouch", "-XX:MaxDirectMemorySize=128m",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"))
                .environment("MALLOC_ARENA_MAX", "2").build();
        int code = launcher.run();
        bar.interrupt();
        progress.done();
        System.err.println(code == 0 ? "kolo: soak passed" : "kolo: soak failed (exit status " + code + ")");
        return code;
    }

    /** Every rank's results and verdicts go to standard output; everything else to standard error. */
    private static void route(Progress progress, int rank, String line) {
        if (line.startsWith("{") || line.startsWith("soak ")) {
            progress.above(System.out, line);
        } else {
            progress.above(System.err, "[" + rank + "] " + line);
        }
    }

    private int runWorker() {
        KoloConfig config = KoloConfig.builderFromEnvironment().metricsPort(0).build();
        ParentWatch.startIfLaunched();
        try (Kolo kolo = Kolo.init(config)) {
            SoakRun run = new SoakRun(kolo, smallTensors, largeMb << 20);
            long totalNanos = (long) (minutes * 60e9);
            // The start is measured after a warm-up (JIT, fusion buffer, response cache, pools and the direct
            // memory high-water mark at their size).
            long warmupNanos = warmupNanos(totalNanos);
            SoakRun.Result r;
            try {
                r = run.run(warmupNanos, totalNanos);
            } catch (RuntimeException e) {
                System.err.println("kolo: soak failed on rank " + kolo.rank() + ": " + e.getMessage());
                return 1;
            }
            SoakBudget.Verdict v = SoakBudget.judge(r.start(), r.end());
            report(kolo, "start", r.start(), r.startStep(), r);
            report(kolo, "end", r.end(), r.steps(), r);
            verdict(kolo, r, v);
            if (!v.ok()) {
                System.err.println("kolo: soak failed on rank " + kolo.rank() + ": " + v.reason());
                return 1;
            }
            return 0;
        }
    }

    /** A quarter of the run, at least 30 s (less only for runs shorter than 40 s) and at most 5 minutes. */
    static long warmupNanos(long totalNanos) {
        long quarter = totalNanos / 4;
        long floor = Math.min(30_000_000_000L, totalNanos * 3 / 4);
        return Math.min(300_000_000_000L, Math.max(floor, quarter));
    }

    private void report(Kolo kolo, String phase, SoakSnapshot s, long step, SoakRun.Result r) {
        if (json) {
            System.out.printf(Locale.ROOT, "{\"bench\":\"soak\",\"np\":%d,\"rank\":%d,\"phase\":\"%s\",\"step\":%d,"
                    + "\"elapsed_s\":%.1f,%s}%n", kolo.size(), kolo.rank(), phase, step, s.elapsedSeconds(), s.json());
        } else {
            System.out.printf(Locale.ROOT, "soak rank %d %-5s step %7d at %7.1f s: %s%n", kolo.rank(), phase, step,
                    s.elapsedSeconds(), s.text());
        }
    }

    private void verdict(Kolo kolo, SoakRun.Result r, SoakBudget.Verdict v) {
        double measured = r.end().elapsedSeconds() - r.start().elapsedSeconds();
        double rate = measured > 0 ? (r.steps() - r.startStep()) / measured : 0;
        if (json) {
            System.out.printf(Locale.ROOT, "{\"bench\":\"soak\",\"np\":%d,\"rank\":%d,\"result\":\"%s\",\"steps\":%d,"
                    + "\"steps_per_s\":%.2f,\"checked_values\":%d,%s,\"reason\":\"%s\"}%n", kolo.size(), kolo.rank(),
                    v.ok() ? "ok" : "fail", r.steps(), rate, r.checkedValues(), v.growthJson(),
                    v.reason().replace("\\", "\\\\").replace("\"", "\\\""));
        } else {
            System.out.printf(Locale.ROOT, "soak rank %d %s: %d steps (%.2f/s), %d values checked; growth %s%s%n",
                    kolo.rank(), v.ok() ? "ok" : "FAILED", r.steps(), rate, r.checkedValues(), v.growthText(),
                    v.ok() ? "" : ": " + v.reason());
        }
    }
}
