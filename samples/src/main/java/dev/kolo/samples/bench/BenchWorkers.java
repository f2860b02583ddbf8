package dev.kolo.samples.bench;

import dev.kolo.samples.launch.Launcher;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine.Option;

/**
 * A benchmark that runs as N local worker processes of this program: the hidden {@code --worker} flag that makes
 * a process one of them, and the driver's start of {@code bench NAME --worker -np N ...}.
 */
final class BenchWorkers {
    @Option(names = "--worker", hidden = true, description = "Run as one worker of the benchmark job.")
    boolean worker;

    /** @return true in a worker process, false in the driver that starts them */
    boolean isWorker() {
        return worker;
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
