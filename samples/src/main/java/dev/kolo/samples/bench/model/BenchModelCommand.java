package dev.kolo.samples.bench.model;

import dev.kolo.runtime.Settings;
import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.KoloVersion;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench model}: the α-β cost model ({@link CostModel}) printed, no job run. (a) For every np and every
 * size from 4 B to 64 MiB by factors of 4, the algorithm the runtime picks and the modelled times of the
 * data-plane allreduce and of a cached allreduce as {@code bench allreduce} times it (its agreement round
 * included); (b) the cached ResNet-50-shaped step and its agreement round (after and before the change to
 * recursive doubling); (c) with {@code --measured}, the model fitted to this machine's {@code bench allreduce
 * --json} lines ({@link CostModelFit}), against each measured point, and the share within ±30%. Why: the
 * projections at 64 to 1024 ranks, which nothing here can run, are only as good as the model is at 2 to 8.
 */
@Command(name = "model", description = "The alpha-beta cost model: algorithm and time per size, the cached "
        + "ResNet-50 step at scale, and the model fitted against measured bench allreduce lines.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchModelCommand implements Callable<Integer> {
    /** 4 B to 64 MiB by factors of 4. */
    static final long MIN_BYTES = 4;
    static final long MAX_BYTES = 64L * 1024 * 1024;

    @Option(names = "--alpha-us", paramLabel = "US", defaultValue = "10",
            description = "Latency per message (step) of the network, microseconds (default: ${DEFAULT-VALUE}).")
    double alphaUs;

    @Option(names = "--link-gbps", paramLabel = "GBIT", defaultValue = "25",
            description = "Link bandwidth, gigabits per second (default: ${DEFAULT-VALUE}).")
    double linkGbps;

    @Option(names = "--reduce-gbps", paramLabel = "GBYTE", defaultValue = "21.5",
            description = "In-place add of the kernels, gigabytes per second (default: ${DEFAULT-VALUE}).")
    double reduceGBps;

    @Option(names = "--np", paramLabel = "N,N,...", split = ",", defaultValue = "2,4,8,64,256,1024",
            description = "Job sizes to project (default: ${DEFAULT-VALUE}).")
    List<Integer> nps;

    @Option(names = "--measured", paramLabel = "FILE", arity = "1..*",
            description = "Files of bench allreduce --json lines to fit the model to and compare it with.")
    List<Path> measured = new ArrayList<>();

    @Option(names = "--cores", paramLabel = "N",
            description = "Cores of the host the measured ranks shared (default: this machine's processors).")
    Integer cores;

    @Option(names = "--fusion-threshold", paramLabel = "BYTES",
            description = "Largest fused buffer of the step (KOLO_FUSION_THRESHOLD; default: ${DEFAULT-VALUE}).")
    long fusionThreshold = Settings.FUSION_THRESHOLD.defaultValue();

    @Option(names = "--agreement", paramLabel = "SCHEME", defaultValue = "RECURSIVE_DOUBLING",
            description = "Agreement round of the runtime measured and projected: ${COMPLETION-CANDIDATES} "
                    + "(default: ${DEFAULT-VALUE}).")
    CostModel.Agreement agreement;

    @Mixin
    JsonOption output = new JsonOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (!(alphaUs >= 0 && linkGbps > 0 && reduceGBps > 0) || fusionThreshold < 0) {
            throw new IllegalArgumentException("--alpha-us must be 0 or more, --link-gbps and --reduce-gbps above 0, "
                    + "--fusion-threshold 0 or more");
        }
        for (int n : nps) {
            if (n < 1 || n > 1 << 20) {
                throw new IllegalArgumentException("--np takes job sizes from 1 to " + (1 << 20) + " (got " + n + ")");
            }
        }
        int hostCores = cores != null ? cores : Runtime.getRuntime().availableProcessors();
        if (hostCores < 1) {
            throw new IllegalArgumentException("--cores must be at least 1");
        }
        List<MeasuredPoint> points = MeasuredPoint.read(measured);
        PrintWriter out = spec.commandLine().getOut();
        CostModel model = CostModel.network(alphaUs, linkGbps, reduceGBps, agreement);
        printSizes(out, model);
        printSteps(out, model);
        printMeasured(out, model, hostCores, points);
        out.flush();
        return 0;
    }

    private void printSizes(PrintWriter out, CostModel model) {
        if (!output.json()) {
            out.printf(Locale.ROOT, "(a) allreduce by size: alpha %.3g us per step, link %.3g Gb/s, add %.3g GB/s, a "
                    + "host per rank; %s agreement round%n", alphaUs, linkGbps, reduceGBps, agreement);
            out.printf(Locale.ROOT, "| %5s | %10s | %18s | %5s | %6s | %12s | %13s | %13s |%n", "np", "bytes",
                    "algorithm", "steps", "msgs", "sent_bytes", "collective_us", "cached_op_us");
        }
        for (int n : nps) {
            for (long bytes = MIN_BYTES; bytes <= MAX_BYTES; bytes *= 4) {
                Algorithm a = CostModel.select(n, bytes);
                CollectiveCost c = n == 1 ? CollectiveCost.NONE : a.of(n, bytes);
                double collective = model.allreduceSeconds(n, bytes) * 1e6;
                double cached = model.cachedAllreduceSeconds(n, bytes) * 1e6;
                String path = CostModel.cachedPath(n, bytes);
                if (output.json()) {
                    out.printf(Locale.ROOT, "{\"bench\":\"model\",\"section\":\"allreduce\",\"np\":%d,\"bytes\":%d,"
                            + "\"algorithm\":\"%s\",\"cached_path\":\"%s\",\"steps\":%d,\"messages\":%d,"
                            + "\"sent_bytes\":%.0f,\"collective_us\":%.2f,\"cached_op_us\":%.2f}%n", n, bytes, a, path,
                            c.steps(), c.messages(), c.bytesSent(), collective, cached);
                } else {
                    String shown = path.equals("EAGER") ? a + "|EAGER" : a.name();
                    out.printf(Locale.ROOT, "| %5d | %10d | %18s | %5d | %6d | %12.0f | %13.2f | %13.2f |%n", n, bytes,
                            shown, c.steps(), c.messages(), c.bytesSent(), collective, cached);
                }
            }
        }
        if (!output.json()) {
            out.println("algorithm|EAGER: a cached op this small rides in the agreement round (cached_op_us); "
                    + "collective_us is the algorithm alone.");
        }
    }

    private void printSteps(PrintWriter out, CostModel model) {
        CostModel before = new CostModel(model.alpha, model.beta, model.gamma, model.handoff, model.overhead,
                model.cores, CostModel.Agreement.ALL_TO_ALL);
        CostModel after = new CostModel(model.alpha, model.beta, model.gamma, model.handoff, model.overhead,
                model.cores, CostModel.Agreement.RECURSIVE_DOUBLING);
        if (!output.json()) {
            out.printf(Locale.ROOT, "(b) cached ResNet-50 step: 161 float32 tensors fused at %d bytes; one agreement "
                    + "round, then the fused buffers' allreduces%n", fusionThreshold);
            out.printf(Locale.ROOT, "| %5s | %11s | %11s | %7s | %12s | %12s | %12s | %14s | %10s |%n", "np",
                    "bytes", "eager_bytes", "buffers", "round_msgs", "round_us", "round_a2a_us", "round_a2a_msgs",
                    "step_ms");
        }
        for (int n : nps) {
            ResNet50Step step = ResNet50Step.of(n, fusionThreshold);
            CollectiveCost rd = step.agreement(after);
            CollectiveCost a2a = step.agreement(before);
            double roundUs = step.agreementSeconds(after) * 1e6;
            double a2aUs = step.agreementSeconds(before) * 1e6;
            double stepMs = step.seconds(model) * 1e3;
            if (output.json()) {
                out.printf(Locale.ROOT, "{\"bench\":\"model\",\"section\":\"resnet50_step\",\"np\":%d,\"tensors\":%d,"
                        + "\"bytes\":%d,\"eager_bytes\":%d,\"buffers\":%d,\"round_messages\":%d,\"round_us\":%.2f,"
                        + "\"round_all_to_all_messages\":%d,\"round_all_to_all_us\":%.2f,\"agreement\":\"%s\","
                        + "\"step_ms\":%.3f}%n", n, step.tensors, step.totalBytes, step.eagerBytes,
                        step.batches.size(), rd.messages(), roundUs, a2a.messages(), a2aUs, agreement, stepMs);
            } else {
                out.printf(Locale.ROOT, "| %5d | %11d | %11d | %7d | %12d | %12.2f | %12.2f | %14d | %10.3f |%n", n,
                        step.totalBytes, step.eagerBytes, step.batches.size(), rd.messages(), roundUs, a2aUs,
                        a2a.messages(), stepMs);
            }
        }
        if (!output.json()) {
            out.printf(Locale.ROOT, "round: recursive doubling (after the change); round_a2a: every rank to every "
                    + "other (before it); step_ms with the %s round%n", agreement);
        }
    }

    private void printMeasured(PrintWriter out, CostModel model, int hostCores, List<MeasuredPoint> points) {
        if (points.isEmpty()) {
            if (!output.json()) {
                out.println("(c) model against measured: no --measured FILE given");
            }
            return;
        }
        CostModel fitted = CostModelFit.fit(model, hostCores, points);
        double within = CostModelFit.withinShare(fitted, points, 0.30);
        int inside = (int) Math.round(within * points.size());
        if (output.json()) {
            out.printf(Locale.ROOT, "{\"bench\":\"model\",\"section\":\"fit\",\"cores\":%d,\"alpha_us\":%.3f,"
                    + "\"link_GBps\":%s,\"handoff_us\":%.3f,\"overhead_us\":%.3f,\"reduce_GBps\":%.3f,"
                    + "\"points\":%d,\"within_30pct\":%d,\"share_within_30pct\":%.3f}%n", hostCores,
                    fitted.alpha * 1e6, fitted.beta == 0 ? "null" : String.format(Locale.ROOT, "%.3f",
                            gbps(fitted.beta)), fitted.handoff * 1e6, fitted.overhead * 1e6, reduceGBps,
                    points.size(), inside, within);
        } else {
            out.printf(Locale.ROOT, "(c) model against measured: fitted on %d points, %d cores shared by the ranks: "
                    + "alpha %.2f us per step, link %.3f GB/s per rank, hand-off %.2f us per step (times np/cores - "
                    + "1), overhead %.2f us per op, add %.3g GB/s (kept)%n", points.size(), hostCores,
                    fitted.alpha * 1e6, gbps(fitted.beta), fitted.handoff * 1e6, fitted.overhead * 1e6, reduceGBps);
            out.printf(Locale.ROOT, "| %5s | %10s | %18s | %12s | %12s | %6s |%n", "np", "bytes", "path",
                    "measured_us", "model_us", "ratio");
        }
        for (MeasuredPoint p : points) {
            double modelUs = fitted.cachedAllreduceSeconds(p.np(), p.bytes()) * 1e6;
            double measuredUs = p.seconds() * 1e6;
            String path = CostModel.cachedPath(p.np(), p.bytes());
            if (output.json()) {
                out.printf(Locale.ROOT, "{\"bench\":\"model\",\"section\":\"measured\",\"np\":%d,\"bytes\":%d,"
                        + "\"path\":\"%s\",\"measured_us\":%.2f,\"model_us\":%.2f,\"ratio\":%.3f}%n", p.np(), p.bytes(),
                        path, measuredUs, modelUs, modelUs / measuredUs);
            } else {
                out.printf(Locale.ROOT, "| %5d | %10d | %18s | %12.2f | %12.2f | %6.3f |%n", p.np(), p.bytes(), path,
                        measuredUs, modelUs, modelUs / measuredUs);
            }
        }
        if (!output.json()) {
            out.printf(Locale.ROOT, "within +-30%%: %d of %d points (%.0f%%)%n", inside, points.size(), within * 100);
        }
    }

    /** Gigabytes per second of a time per byte (infinite when the fit left β at 0: bytes cost nothing). */
    private static double gbps(double secondsPerByte) {
        return secondsPerByte == 0 ? Double.POSITIVE_INFINITY : 1 / secondsPerByte / 1e9;
    }
}
