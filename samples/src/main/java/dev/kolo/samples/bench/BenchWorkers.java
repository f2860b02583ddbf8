package dev.kolo.samples.bench;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.ParentWatch;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A benchmark that runs as N local worker processes of this program: its {@code --json} output, the hidden
 * {@code --worker} flag that makes a process one of them, the driver's start of {@code bench NAME --worker -np N
 * ...}, and a worker's join of the job.
 */
final class BenchWorkers {
    @Mixin
    JsonOption output = new JsonOption();

    @Option(names = "--worker", hidden = true, description = "Run as one worker of the benchmark job.")
    boolean worker;

    /** @return true in a worker process, false in the driver that starts them */
    boolean isWorker() {
        return worker;
    }

    /** @return whether {@code --json} was given: one JSON object per line instead of a table */
    boolean json() {
        return output.json();
    }

    /**
     * Starts {@code bench NAME --worker -np N options... [--json]} as N local processes (see {@link #start}),
     * rank 0's results to standard output.
     *
     * @return 0 if every worker exited 0, else the first failure's exit status
     */
    int launch(String bench, int np, List<String> options) {
        List<String> args = new ArrayList<>(options);
        if (json()) {
            args.add("--json");
        }
        return start(bench, np, args, BenchWorkers::rankZeroResults);
    }

    /** In a worker process: watches the launcher (see {@link ParentWatch}) and joins the job with {@code config}. */
    static Kolo joinJob(KoloConfig.Builder config) {
        KoloConfig c = config.build();
        ParentWatch.startIfLaunched();
        return Kolo.init(c);
    }

    /**
     * Starts {@code bench NAME --worker -np N options...} as N local processes, logging warnings only so that
     * their output is the results, and waits for them.
     *
     * @return 0 if every worker exited 0, else the first failure's exit status
     */
    static int start(String bench, int np, List<String> options, Launcher.OutputSink sink) {
        List<String> args = new ArrayList<>(List.of("bench", bench, "--worker", "-np", Integer.toString(np)));
        args.addAll(options);
        return Launcher.builder("bench-" + UUID.randomUUID().toString().substring(0, 8), np).workerArgs(args)
                .status(System.err).sink(sink).jvmFlags(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"))
                .build().run();
    }

    /** Rank 0's results (JSON objects and table rows) go to standard output as they are; the rest to stderr. */
    static void rankZeroResults(int rank, String line) {
        if (rank == 0 && (line.startsWith("{") || line.startsWith("|"))) {
            synchronized (System.out) {
                System.out.println(line);
            }
        } else {
            System.err.println("[" + rank + "] " + line);
        }
    }
}
