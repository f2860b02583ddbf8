package dev.kolo.samples.bench;

import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.NpOption;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bench ceiling -np N -- SAMPLE_ARGS}: the sample's training job at {@code -np N} against the machine's
 * ceiling for it, {@code N} single-rank jobs of the same arguments run at once: what the machine gives N processes
 * that never wait for each other. Each round runs the job, then the N lone jobs, so that a slow stretch of the
 * machine touches both alike; a run's rate is the median of rank 0's {@code samples/s} lines after the first. Prints
 * each round's job rate, ceiling and their ratio, and the median ratio.
 */
@Command(name = "ceiling", description = "The sample's job at -np N against N single-rank jobs run at once (the "
        + "machine's ceiling for N processes that never wait for each other), in interleaved rounds. Arguments "
        + "after -- go to the sample.", mixinStandardHelpOptions = true, versionProvider = KoloVersion.class,
        sortOptions = false)
public final class BenchCeilingCommand implements java.util.concurrent.Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--rounds", paramLabel = "R", defaultValue = "3",
            description = "Rounds of the job and the lone jobs (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Mixin
    JsonOption json = new JsonOption();

    @Parameters(paramLabel = "SAMPLE_ARGS", description = "The sample's options, after --, e.g. --model cnn "
            + "--max-steps 300 --log-every 25.")
    List<String> sampleArgs = new ArrayList<>();

    private static final Pattern RATE = Pattern.compile("samples/s ([0-9.]+)");

    @Override
    public Integer call() throws Exception {
        int np = workers.np();
        if (np < 2 || rounds < 1) {
            throw new IllegalArgumentException("-np must be at least 2 and --rounds at least 1");
        }
        List<Double> ratios = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            double job = rate(runJob(np));
            List<Double> lone = runLone(np);
            double ceiling = 0;
            for (double r : lone) {
                ceiling += r;
            }
            double ratio = job / ceiling;
            ratios.add(ratio);
            System.out.println(json.json()
                    ? String.format(Locale.ROOT, "{\"bench\":\"ceiling\",\"np\":%d,\"round\":%d,\"job_samples_per_s\":"
                            + "%.1f,\"ceiling_samples_per_s\":%.1f,\"job_vs_ceiling\":%.4f}", np, round, job, ceiling, ratio)
                    : String.format(Locale.ROOT, "round %d: job at -np %d %.0f samples/s, %d lone jobs at once %.0f "
                            + "samples/s, job/ceiling %.3f", round, np, job, np, ceiling, ratio));
        }
        Collections.sort(ratios);
        double median = ratios.get(ratios.size() / 2);
        if (ratios.size() % 2 == 0) {
            median = (median + ratios.get(ratios.size() / 2 - 1)) / 2;
        }
        System.out.println(json.json()
                ? String.format(Locale.ROOT, "{\"bench\":\"ceiling\",\"np\":%d,\"rounds\":%d,\"median_job_vs_ceiling\""
                        + ":%.4f}", np, rounds, median)
                : String.format(Locale.ROOT, "median job/ceiling over %d rounds: %.3f", rounds, median));
        return 0;
    }

    /** @return rank 0's output lines of the sample at {@code -np np} */
    private List<String> runJob(int np) {
        return launch(np);
    }

    /** @return each lone job's rate, the {@code np} of them run at once */
    private List<Double> runLone(int np) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(np);
        try {
            List<Future<List<String>>> jobs = new ArrayList<>();
            for (int i = 0; i < np; i++) {
                jobs.add(pool.submit(() -> launch(1)));
            }
            List<Double> rates = new ArrayList<>();
            for (Future<List<String>> f : jobs) {
                rates.add(rate(f.get(JOB_TIMEOUT_MINUTES, TimeUnit.MINUTES)));
            }
            return rates;
        } finally {
            pool.shutdownNow();
        }
    }

    private List<String> launch(int np) {
        List<String> lines = new CopyOnWriteArrayList<>();
        String name = "ceiling-" + UUID.randomUUID().toString().substring(0, 8);
        int status = Launcher.builder(name, np).workerArgs(sampleArgs).secret(UUID.randomUUID().toString())
                .status(new PrintStream(OutputStream.nullOutputStream()))
                .sink((rank, line) -> {
                    if (rank == 0) {
                        lines.add(line);
                    }
                }).build().run();
        if (status != 0) {
            throw new IllegalStateException("a job at -np " + np + " of the sample exited " + status + "; its last "
                    + "lines:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size())));
        }
        return lines;
    }

    /** @return the median of the {@code samples/s} figures after the first (the warm-up interval) */
    static double rate(List<String> lines) {
        List<Double> rates = new ArrayList<>();
        for (String line : lines) {
            Matcher m = RATE.matcher(line);
            if (m.find()) {
                rates.add(Double.parseDouble(m.group(1)));
            }
        }
        if (rates.size() < 2) {
            throw new IllegalStateException("the sample printed " + rates.size() + " samples/s line(s); give it "
                    + "enough steps for two or more (--max-steps, --log-every)");
        }
        List<Double> timed = new ArrayList<>(rates.subList(1, rates.size()));
        Collections.sort(timed);
        int n = timed.size();
        return n % 2 == 1 ? timed.get(n / 2) : (timed.get(n / 2 - 1) + timed.get(n / 2)) / 2;
    }

    private static final long JOB_TIMEOUT_MINUTES = 30;
}
