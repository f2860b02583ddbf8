package dev.kolo.samples.bench;

import static dev.kolo.samples.bench.SlowestRankTimes.medianOfSlowest;
import static dev.kolo.samples.bench.SlowestRankTimes.slowestRank;

import dev.kolo.runtime.Collectives;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ProcessSet;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.NpOption;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench allreduce -np N}: float32 SUM allreduce over N local worker processes, sizes from
 * {@code --min-bytes} to {@code --max-bytes} by factors of 4. Each op is timed alone after a barrier (an
 * agreement round on the data plane, as an MPI barrier is) and the slowest rank's time counts; the median over
 * iterations is reported with algbw and busbw = algbw * 2(n-1)/n, and the time per op of a back-to-back loop.
 * Then a ResNet-50-shaped step (161 gradients submitted back to back) against one allreduce of the same bytes.
 *
 * <p>Every size discards a warm-up before it is timed: batches of untimed ops, each after a barrier as the timed
 * ones are, of about a tenth of the budget and at least 20 (at most 100; never more than fit in one budget when
 * single ops are that slow), repeated until a batch is no faster than 0.8 times the one before (at most 20
 * batches), the counts and the decision derived from the slowest rank's times so that every rank runs the same
 * collectives. Without it the first size timed reported the job still settling (4.6-6.6 ms at 4 B against
 * 0.3-0.4 ms at 16 B, np 6-8 on 2 cores).
 *
 * <p>With {@code --process-sets K} the ranks form K process sets of consecutive ranks, which time their allreduces
 * at the same time, each over its own ranks (barriers and slowest rank of the set); the counts of ops and warm-up
 * batches are agreed by the whole job so that the sets' timed loops overlap, and rank 0 prints one line per set.
 */
@Command(name = "allreduce", description = "Allreduce latency and bandwidth over N local worker processes.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchAllreduceCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--min-bytes", paramLabel = "B", defaultValue = "4", description = "Smallest size (default: ${DEFAULT-VALUE}).")
    long minBytes;

    @Option(names = "--max-bytes", paramLabel = "B", defaultValue = "268435456",
            description = "Largest size (default: ${DEFAULT-VALUE}).")
    long maxBytes;

    /** Small ops before the JIT's first look at how fast they run. */
    private static final int WARM_UP_OPS = 1000;
    /**
     * Small ops for C2 to compile the control and data paths: HotSpot compiles a method with C2 after about 10,000
     * invocations, and behind the JVM's and the cluster's own methods in its queue, so 1,000 left the first size
     * timed half compiled.
     */
    static final int SMALL_WARM_UP_OPS = 20_000;
    /** Longest the small ops after the first {@link #WARM_UP_OPS} run, where ops are slow (many ranks per core). */
    static final double SMALL_WARM_UP_SECONDS = 2.0;

    /**
     * The default warm-up, per rank per core of the host: a job just formed runs several times slower for seconds
     * while its JVMs compile and the cluster settles, longer the more ranks share a core (measured at np 8 on 2
     * cores: the first sizes timed at 4 B 13.3 ms and 16 B 9.5 ms with no warm-up, 0.26 and 0.28 ms after 10 s of
     * it; a warm-up in batches per size did not see it, since the slow phase is steady for seconds).
     */
    static final double AUTO_WARM_UP_SECONDS_PER_RANK_PER_CORE = 2.5;

    /** @return {@code --warmup}, or by default {@link #AUTO_WARM_UP_SECONDS_PER_RANK_PER_CORE} times ranks per core */
    double warmUpSeconds(int ranks) {
        if (warmup >= 0) {
            return warmup;
        }
        int cores = Runtime.getRuntime().availableProcessors();
        return AUTO_WARM_UP_SECONDS_PER_RANK_PER_CORE * Math.max(1.0, (double) ranks / cores);
    }

    /** Untimed ops before each size is timed (see {@link #warmUpIterations}). */
    static final int MIN_WARM_UP_OPS = 20;
    static final int MAX_WARM_UP_OPS = 100;

    @Option(names = "--budget", paramLabel = "SECONDS", defaultValue = "1.0",
            description = "Timed seconds per size, roughly (default: ${DEFAULT-VALUE}).")
    double budget;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "-1",
            description = "Run allreduces of every size for about this long before timing anything, so that the "
                    + "JIT (and with TLS its crypto) is warm and the new job has settled (default: "
                    + AUTO_WARM_UP_SECONDS_PER_RANK_PER_CORE + " s times the ranks per core of this host, at least "
                    + AUTO_WARM_UP_SECONDS_PER_RANK_PER_CORE + " s).")
    double warmup;

    // fallbackValue: without it picocli gives a negatable option that defaults to true the inverse of its
    // default for either spelling, so --no-fused-step would leave it on.
    @Option(names = "--op", paramLabel = "OP", defaultValue = "sum",
            description = "The reduction timed: sum, or adasum (default: ${DEFAULT-VALUE}).")
    String op;

    private ReduceOp reduceOp = ReduceOp.SUM;

    @Option(names = "--fused-step", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Also time the ResNet-50-shaped fused step (default: on).")
    boolean fusedStep;

    @Option(names = "--process-sets", paramLabel = "K", defaultValue = "1",
            description = "Split the ranks into K process sets of consecutive ranks that time their allreduces at the "
                    + "same time, one result line per set; N must be a multiple of K (default: ${DEFAULT-VALUE}: the "
                    + "whole job).")
    int processSets;

    @Option(names = "--hosts", paramLabel = "H", defaultValue = "1",
            description = "Spread the workers over H hosts that are network namespaces of this machine (root only), "
                    + "N / H consecutive ranks each: ranks of a host share memory, hosts talk TCP (default: "
                    + "${DEFAULT-VALUE}: every worker on this host).")
    int hosts;

    @Option(names = "--link-rate", paramLabel = "RATE",
            description = "With --hosts, limit what each host sends to RATE (tc's rate, e.g. 10gbit), as a network "
                    + "card would.")
    String linkRate;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "0",
            description = "Serve and record metrics on PORT + rank; 0 (default) leaves metrics off.")
    int metricsPort;

    @Option(names = "--timeline", paramLabel = "PATH",
            description = "Write a Chrome-trace timeline per worker ({rank} in PATH becomes the rank).")
    String timeline;

    @Override
    public Integer call() {
        int np = workers.np();
        if (minBytes < 4 || maxBytes < minBytes || maxBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("need 4 <= --min-bytes <= --max-bytes <= " + Integer.MAX_VALUE);
        }
        if (!(budget > 0)) {
            throw new IllegalArgumentException("--budget must be a positive number of seconds");
        }
        if (!(warmup >= 0) && warmup != -1) {
            throw new IllegalArgumentException("--warmup must be 0 or more seconds");
        }
        if (hosts < 1 || np % hosts != 0) {
            throw new IllegalArgumentException("--hosts must divide -np (got " + hosts + " for -np " + np + ")");
        }
        if (linkRate != null && hosts == 1) {
            throw new IllegalArgumentException("--link-rate limits the links between --hosts: give --hosts 2 or more");
        }
        if (processSets < 1 || np % processSets != 0) {
            throw new IllegalArgumentException("--process-sets must divide -np (got " + processSets + " for -np " + np
                    + ")");
        }
        reduceOp = switch (op.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "sum" -> ReduceOp.SUM;
            case "adasum" -> ReduceOp.ADASUM;
            default -> throw new IllegalArgumentException("--op must be sum or adasum (got '" + op + "')");
        };
        return role.isWorker() ? runWorker() : launch(np);
    }

    private int launch(int np) {
        if (hosts > 1) {
            // The workers of each host get what they time; the hosts and their links are the driver's.
            List<String> args = new ArrayList<>(role.givenOptions("--hosts", "--link-rate"));
            if (role.json()) {
                args.add("--json");
            }
            try {
                return BenchHosts.run("allreduce", np, hosts, linkRate, args);
            } catch (IllegalArgumentException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("bench over " + hosts + " hosts failed: " + e, e);
            }
        }
        return role.launch("allreduce", np);
    }

    private int runWorker() {
        KoloConfig.Builder b = KoloConfig.builderFromEnvironment();
        int rankHint = Objects.requireNonNullElse(b.build().get(Settings.RANK_HINT), 0);
        try (Kolo kolo = BenchWorkers.joinJob(b.metricsPort(metricsPort == 0 ? 0 : metricsPort + rankHint)
                .set(Settings.TIMELINE, timeline))) {
            int n = kolo.size();
            Collectives group = group(kolo);
            if (!role.json() && kolo.rank() == 0) {
                System.out.printf(Locale.ROOT, "| %12s | %12s | %10s | %10s | %12s |  (np %d, %s kernels%s)%n", "bytes",
                        "time_us", "algbw_GBps", "busbw_GBps", "b2b_us", n, kolo.kernels(),
                        processSets > 1 ? ", " + processSets + " process sets of " + group.size() : "");
            }
            ByteBuffer big = ByteBuffer.allocateDirect((int) maxBytes).order(ByteOrder.LITTLE_ENDIAN);
            if (reduceOp == ReduceOp.ADASUM) {
                // A nonzero gradient, different on every rank (a sum would overflow from op to op).
                for (int i = 0; i + 4 <= big.capacity(); i += 4) {
                    big.putFloat(i, 1f + kolo.rank() + (i & 1023) / 1024f);
                }
            }
            warmUpSmallOps(kolo, big);
            if (warmUpSeconds(n) > 0) {
                warmUpEverySize(kolo, big, warmUpSeconds(n));
                rehearse(kolo, group, big, warmUpSeconds(n));
            }
            for (long bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
                double[] times = timeSize(kolo, group, big, bytes);
                report(kolo, group, bytes, times[0], times[1]);
            }
            if (fusedStep && group == kolo) {
                FusedStep.run(kolo, warmUpSeconds(n), budget, role.json());
            }
        }
        return 0;
    }

    /** @return the job, or this rank's process set of {@code --process-sets} (every rank creates all of them) */
    private Collectives group(Kolo kolo) {
        if (processSets == 1) {
            return kolo;
        }
        int size = kolo.size() / processSets;
        ProcessSet mine = null;
        for (int s = 0; s < processSets; s++) {
            int[] ranks = new int[size];
            for (int i = 0; i < size; i++) {
                ranks[i] = s * size + i;
            }
            ProcessSet set = kolo.processSet(ranks);
            if (set.rank() >= 0) {
                mine = set;
            }
        }
        return mine;
    }

    /**
     * Small ops until the JIT has compiled the control and data paths: without it the first size measured
     * (whichever it is) reports the interpreter, several times slower than the steady state.
     */
    private static void warmUpSmallOps(Kolo kolo, ByteBuffer big) {
        int bytes = Math.min(4096, big.capacity()) & ~3;
        Tensor t = Tensor.wrap(DType.FLOAT32, big.duplicate().limit(bytes), bytes / 4);
        long t0 = System.nanoTime();
        for (int i = 0; i < WARM_UP_OPS; i++) {
            kolo.allreduceInPlace("bench.warmup", t, ReduceOp.SUM);
        }
        double perOp = (System.nanoTime() - t0) / 1e9 / WARM_UP_OPS;
        for (int i = smallWarmUpOps(slowestRank(kolo, "bench.warmup.probe", perOp)); i > 0; i--) {
            kolo.allreduceInPlace("bench.warmup", t, ReduceOp.SUM);
        }
    }

    /**
     * @return the small ops still to run for the JIT when the first ones took {@code perOpSeconds} each on the
     *         slowest rank (every rank computes the same count): up to {@link #SMALL_WARM_UP_OPS} in all, and no
     *         more than fit in about {@link #SMALL_WARM_UP_SECONDS}
     */
    static int smallWarmUpOps(double perOpSeconds) {
        double fit = SMALL_WARM_UP_SECONDS / Math.max(perOpSeconds, 1e-9);
        return (int) Math.max(0, Math.min(SMALL_WARM_UP_OPS - WARM_UP_OPS, fit));
    }

    /**
     * Rounds of one allreduce per size until {@link #warmup} seconds have passed on every rank (same count on
     * all): the large sizes' paths (pipelined ring, kernels on long runs; AES-GCM with TLS) compile too.
     */
    private void warmUpEverySize(Kolo kolo, ByteBuffer big, double seconds) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (true) {
            for (long bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
                Tensor t = Tensor.wrap(DType.FLOAT32, big.duplicate().limit((int) bytes), bytes / 4);
                kolo.allreduceInPlace("warmup", t, ReduceOp.SUM);
            }
            double done = System.nanoTime() - end >= 0 ? 1 : 0;
            if (kolo.allreduce("warmup.done", Tensor.of(new double[] {done}, 1), ReduceOp.MIN).toDoubleArray()[0] > 0) {
                return;
            }
        }
    }

    /** @return the slowest rank's median time of one op of {@code bytes} after a barrier, and back to back */
    private double[] timeSize(Kolo kolo, Collectives group, ByteBuffer big, long bytes) {
        Tensor t = Tensor.wrap(DType.FLOAT32, big.duplicate().limit((int) bytes), bytes / 4);
        Runnable op = () -> group.allreduceInPlace("bench", t, reduceOp);
        double seconds = timeOps(kolo, group, "ar." + bytes, op);
        return new double[] {seconds, timeBackToBack(kolo, group, "ar." + bytes, op, seconds)};
    }

    /**
     * The small sizes' timing, untimed, in rounds until about {@code seconds} have passed on every rank: the JIT
     * compiles the hot methods for the mix of paths the timing takes (barrier, op, the agreement on the slowest
     * rank), not for the warm-up's alone. Without it the first sizes timed ran 1.5-2x slower than later ones (4 B
     * 1.87 against 16 B 1.49 us at np 2; with 16 B first, 16 B 2.0-3.1 us): each path met for the first time made
     * C2 drop its compiled hot methods ("made not entrant", -XX:+PrintCompilation) and recompile them for about a
     * second, while a size takes milliseconds to time.
     */
    private void rehearse(Kolo kolo, Collectives group, ByteBuffer big, double seconds) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (true) {
            for (long bytes = minBytes; bytes <= Math.min(maxBytes, REHEARSED_BYTES); bytes *= 4) {
                timeSize(kolo, group, big, bytes);
            }
            double done = System.nanoTime() - end >= 0 ? 1 : 0;
            if (kolo.allreduce("rehearsal.done", Tensor.of(new double[] {done}, 1), ReduceOp.MIN)
                    .toDoubleArray()[0] > 0) {
                return;
            }
        }
    }

    /** Largest size {@link #rehearse} times: larger ones take longer than the JIT to settle, which they give it. */
    static final long REHEARSED_BYTES = 64 * 1024;

    /**
     * Untimed ops before a size is timed, from the slowest rank's probe (every rank computes the same count):
     * about a tenth of the budget, at least {@value #MIN_WARM_UP_OPS} and at most {@value #MAX_WARM_UP_OPS}, but
     * no more than fit in one budget (at least 2) when single ops are that slow, so that large sizes do not
     * spend many budgets warming up.
     */
    static int warmUpIterations(double budget, double slowest) {
        double fit = budget / Math.max(slowest, 1e-6);
        int tenth = (int) Math.min(MAX_WARM_UP_OPS, fit / 10);
        int atLeast = (int) Math.max(2, Math.min(MIN_WARM_UP_OPS, fit));
        return Math.max(tenth, atLeast);
    }

    /**
     * A few ops, an iteration count all ranks agree on, warm-up batches ({@link #warmUpIterations} ops each) until
     * the times are steady, then per-op times whose slowest rank counts.
     */
    private double timeOps(Kolo kolo, Collectives group, String name, Runnable op) {
        for (int i = 0; i < 3; i++) {
            group.barrier();
            op.run();
        }
        group.barrier();
        long t0 = System.nanoTime();
        op.run();
        double once = (System.nanoTime() - t0) / 1e9;
        // Counts and decisions from the whole job's slowest rank: with process sets, every set times as many ops
        // (their loops overlap), without them the job is the group.
        double slowest = slowestRank(kolo, name + ".probe", once);
        int iterations = (int) Math.max(5, Math.min(1000, budget / Math.max(slowest, 1e-6)));
        int warm = warmUpIterations(budget, slowest);
        double previous = Double.MAX_VALUE;
        for (int batch = 0; batch < MAX_WARM_UP_BATCHES; batch++) {
            double median = medianOfSlowest(group, name + ".warm", op, warm);
            if (group != kolo) {
                median = slowestRank(kolo, name + ".warm.job", median);
            }
            if (median > STEADY * previous) {
                break;
            }
            previous = median;
        }
        return medianOfSlowest(group, name + ".times", op, iterations);
    }

    /**
     * Most warm-up batches of a size: a job just formed can run several times slower for seconds (at np 8 on 2
     * cores the first size timed was 10-20x the next: the JVMs compile and the cluster settles), so batches run
     * until one is no faster than {@link #STEADY} times the one before, all ranks deciding alike from the same
     * agreed times.
     */
    static final int MAX_WARM_UP_BATCHES = 20;
    static final double STEADY = 0.8;

    /**
     * Ops back to back, no barrier between them (as nccl-tests and run-mpi.sh's b2b column time them): the
     * whole loop's time per op on the slowest rank. About a tenth of the per-op budget, at least 5 ops.
     */
    private double timeBackToBack(Kolo kolo, Collectives group, String name, Runnable op, double perOp) {
        double slowest = group == kolo ? perOp : slowestRank(kolo, name + ".b2b.probe", perOp);
        int iterations = (int) Math.max(5, Math.min(1000, budget / 2 / Math.max(slowest, 1e-6)));
        group.barrier();
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            op.run();
        }
        double mine = (System.nanoTime() - start) / 1e9 / iterations;
        return slowestRank(group, name + ".b2b", mine);
    }

    /** Rank 0 prints every group's result (each set's, gathered from the job, when there are process sets). */
    private void report(Kolo kolo, Collectives group, long bytes, double seconds, double backToBack) {
        double[] mine = {group == kolo ? 0 : ((ProcessSet) group).id(), group.rank(), seconds, backToBack};
        double[] all = group == kolo ? mine : kolo.allgather("report." + bytes, Tensor.of(mine, 4)).toDoubleArray();
        if (kolo.rank() != 0) {
            return;
        }
        int n = group.size();
        for (int i = 0; i < all.length; i += 4) {
            if (all[i + 1] != 0) {
                continue; // each set's rank 0 speaks for it
            }
            int set = (int) all[i];
            double algbw = bytes / all[i + 2] / 1e9;
            double busbw = algbw * 2.0 * (n - 1) / n;
            if (role.json()) {
                System.out.printf(Locale.ROOT, "{\"bench\":\"allreduce\",\"dtype\":\"float32\",\"np\":%d,%s\"bytes\":%d,"
                        + "\"time_us\":%.2f,\"algbw_GBps\":%.3f,\"busbw_GBps\":%.3f,\"b2b_us\":%.2f}%n", kolo.size(),
                        set == 0 ? "" : "\"process_set\":" + set + ",\"set_size\":" + n + ",", bytes, all[i + 2] * 1e6,
                        algbw, busbw, all[i + 3] * 1e6);
            } else {
                System.out.printf(Locale.ROOT, "| %12d | %12.2f | %10.3f | %10.3f | %12.2f |%s%n", bytes, all[i + 2] * 1e6,
                        algbw, busbw, all[i + 3] * 1e6, set == 0 ? "" : " set " + set);
            }
        }
    }
}
