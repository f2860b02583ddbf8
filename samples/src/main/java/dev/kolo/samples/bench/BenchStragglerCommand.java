package dev.kolo.samples.bench;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticSettings;
import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.WorkerLeftException;
import dev.kolo.elastic.data.BatchSplit;
import dev.kolo.elastic.data.ElasticSampler;
import dev.kolo.elastic.data.StragglerPolicy;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.NpOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench straggler -np N --slow-rank R --slowdown X --policy P}: what a straggler policy buys. Every step each
 * rank "computes" for {@code --sample-us} per sample of its share ({@code --slowdown} times that on the slow rank),
 * as a timed pause so that the ranks' speeds are exactly known and do not compete for the machine's cores, then
 * allreduces a gradient of {@code --grad-kib}. The ranks draw their shares from an {@link ElasticSampler} of a
 * fixed global batch ({@code --batch} per rank at the start) under the policy; with {@code evict} the job is
 * elastic. It prints the job's samples per second after {@code --settle} steps against the ideal, the sum of the
 * ranks' own speeds ({@code throughput_vs_ideal}); with {@code evict}, the step the job lost the slow rank at and
 * its samples per second since, against the remaining ranks' speeds.
 */
@Command(name = "straggler", description = "One slow rank among N: the job's throughput under a straggler policy "
        + "against the sum of the ranks' own speeds.", mixinStandardHelpOptions = true,
        versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchStragglerCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--slow-rank", paramLabel = "R", defaultValue = "-1",
            description = "The slow rank (default: the last).")
    int slowRank;

    @Option(names = "--slowdown", paramLabel = "X", defaultValue = "1.5",
            description = "How many times the others' compute per sample the slow rank takes (default: ${DEFAULT-VALUE}).")
    double slowdown;

    @Option(names = "--policy", paramLabel = "P", defaultValue = "warn",
            description = "off, warn, rebalance or evict: KOLO_STRAGGLER for the job (default: ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--sample-us", paramLabel = "US", defaultValue = "250",
            description = "Simulated compute per sample on a rank of normal speed (default: ${DEFAULT-VALUE}).")
    int sampleMicros;

    @Option(names = "--batch", paramLabel = "B", defaultValue = "32",
            description = "Samples per rank per step at the start; the global batch is B x N (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--steps", paramLabel = "S", defaultValue = "600", description = "Steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--settle", paramLabel = "S", defaultValue = "100",
            description = "Steps before throughput is measured (default: ${DEFAULT-VALUE}).")
    int settle;

    @Option(names = "--window", paramLabel = "S", defaultValue = "20",
            description = "KOLO_STRAGGLER_WINDOW for the job (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--grad-kib", paramLabel = "K", defaultValue = "256",
            description = "Gradient allreduced per step, in KiB (default: ${DEFAULT-VALUE}).")
    int gradKib;

    @Option(names = "--commit-every", paramLabel = "S", defaultValue = "10",
            description = "Steps between commits (default: ${DEFAULT-VALUE}).")
    int commitEvery;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() {
        int np = workers.np();
        StragglerPolicy p = ElasticSettings.STRAGGLER.parse(policy, "--policy");
        if (slowRank < -1 || slowRank >= np || slowdown < 1 || sampleMicros < 1 || batch < 1 || steps < 2
                || settle < 0 || settle >= steps || gradKib < 1 || commitEvery < 1) {
            throw new IllegalArgumentException("--slow-rank must be a rank below -np, --slowdown at least 1, "
                    + "--sample-us, --batch, --grad-kib and --commit-every at least 1, and --settle below --steps");
        }
        if (p == StragglerPolicy.EVICT && np < 3) {
            throw new IllegalArgumentException("--policy evict needs -np 3 or more: the job goes on as an elastic "
                    + "job of the others, at least 2");
        }
        if (role.isWorker()) {
            return runWorker();
        }
        List<String> args = new ArrayList<>(List.of("bench", "straggler", "--worker", "-np", Integer.toString(np)));
        args.addAll(role.givenOptions());
        if (role.json()) {
            args.add("--json");
        }
        Launcher.Builder launch = Launcher.builder("bench-" + UUID.randomUUID().toString().substring(0, 8), np)
                .workerArgs(args).status(System.err).sink(BenchWorkers::rankZeroResults)
                .jvmFlags(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"))
                .environment(ElasticSettings.STRAGGLER.name(), p.name().toLowerCase(Locale.ROOT))
                .environment(ElasticSettings.STRAGGLER_WINDOW.name(), Integer.toString(window));
        if (p == StragglerPolicy.EVICT) {
            launch.elastic(np - 1, np);
        }
        return launch.build().run();
    }

    private int runWorker() {
        Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment().metricsPort(0));
        int np = kolo.size();
        int slow = slowRank < 0 ? np - 1 : slowRank;
        // The slow worker is one process: it keeps its slowness under whatever rank a new generation gives it.
        double own = (kolo.rank() == slow ? slowdown : 1) * sampleMicros * 1000.0;
        int global = batch * np;
        ElasticState state = ElasticState.builder(kolo).replica(false).build();
        ElasticSampler sampler = ElasticSampler.builder(kolo).split(BatchSplit.global(global)).shuffle(false)
                .build().register(state);
        state.value("step", 0L);
        Tensor grad = Tensor.allocate(DType.FLOAT32, gradKib * 256);
        StepClock clock = new StepClock(steps);
        try {
            Elastic.run(kolo, state, s -> {
                clock.entered(s.longValue("step"), kolo.size());
                Iterator<int[]> shares = sampler.batches((long) global * (steps + 1));
                for (long step = s.longValue("step"); step < steps; ) {
                    int[] share = shares.next();
                    compute((long) (share.length * own));
                    kolo.allreduceInPlace("grad", grad, ReduceOp.AVERAGE);
                    sampler.stepped();
                    step++;
                    s.set("step", step);
                    clock.stepped(step);
                    if (step % commitEvery == 0) {
                        s.commit();
                    }
                }
                return null;
            });
        } catch (WorkerLeftException e) {
            System.err.println("evicted at step " + state.longValue("step"));
            kolo.close();
            return 0;
        }
        report(kolo, clock, sampler, slow, global);
        kolo.close();
        return 0;
    }

    private void report(Kolo kolo, StepClock clock, ElasticSampler sampler, int slow, int global) {
        double rankSpeed = 1e6 / sampleMicros;
        int np = workers.np();
        double ideal = rankSpeed * (np - 1) + rankSpeed / slowdown;
        double measured = clock.samplesPerSecond(settle, steps, global);
        if (kolo.rank() != 0) {
            return;
        }
        StringBuilder json = new StringBuilder();
        json.append(String.format(Locale.ROOT, "{\"bench\":\"straggler\",\"np\":%d,\"policy\":\"%s\",\"slow_rank\":%d,"
                        + "\"slowdown\":%.2f,\"sample_us\":%d,\"global_batch\":%d,\"steps\":%d,\"settle\":%d,"
                        + "\"samples_per_s\":%.1f,\"ideal_samples_per_s\":%.1f,\"throughput_vs_ideal\":%.4f,"
                        + "\"final_shares\":\"%s\"", np, policy, slow, slowdown, sampleMicros, global, steps, settle,
                measured, ideal, measured / ideal, Arrays.toString(sampler.batchSizes())));
        if (clock.shrunkAt >= 0) {
            double remaining = rankSpeed * kolo.size();
            double after = clock.samplesPerSecond((int) clock.shrunkAt + 1, steps, global);
            json.append(String.format(Locale.ROOT, ",\"left_at_step\":%d,\"left_after_s\":%.3f,\"size_after\":%d,"
                            + "\"samples_per_s_after\":%.1f,\"remaining_ideal\":%.1f,\"after_vs_remaining\":%.4f",
                    clock.shrunkAt, clock.secondsTo(clock.shrunkAt), kolo.size(), after, remaining, after / remaining));
        }
        System.out.println(role.json() ? json.append('}') : json.append("}").toString().replace(",\"", " | \""));
    }

    /** A pause of exactly {@code nanos}: the simulated compute, a rank's known speed (not a stand-in for a wait). */
    private static void compute(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /** When each step ended on this rank, and the step at which the job lost a rank. */
    private static final class StepClock {
        private final long[] endedAt;
        private final long start = System.nanoTime();
        private long shrunkAt = -1;
        private int size = -1;

        StepClock(int steps) {
            endedAt = new long[steps + 1];
            endedAt[0] = start;
        }

        void entered(long step, int now) {
            if (size > now && shrunkAt < 0) {
                shrunkAt = step;
            }
            size = now;
        }

        void stepped(long step) {
            endedAt[(int) step] = System.nanoTime();
        }

        double samplesPerSecond(int from, int to, int global) {
            return (double) (to - from) * global / ((endedAt[to] - endedAt[from]) / 1e9);
        }

        double secondsTo(long step) {
            return (endedAt[(int) step] - start) / 1e9;
        }
    }
}
