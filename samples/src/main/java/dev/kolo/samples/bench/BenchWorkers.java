package dev.kolo.samples.bench;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.ParentWatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A benchmark that runs as N local worker processes of this program: its {@code --json} output, the hidden
 * {@code --worker} flag that makes a process one of them, the driver's start of {@code bench NAME --worker -np N
 * ...} with the options the user gave ({@link #givenOptions}), and a worker's join of the job.
 */
final class BenchWorkers {
    /** The options every benchmark's driver handles itself: the workers get {@code -np} and {@code --json} apart. */
    private static final Set<String> OWN_OPTIONS = Set.of("-np", "--np", "--json", "--worker");

    @Mixin
    JsonOption output = new JsonOption();

    /** The benchmark command this is mixed into, whose parsed options the workers get again. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

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
     * The options given to the benchmark, as its workers are to get them again: each as it was typed (a flag by
     * the name that sets it to its value, {@code --no-X} for a negated one), in the order given; left out are
     * {@code -np}, {@code --json} and {@code --worker}, which the start adds, and {@code driverOnly}. An option
     * not given is not passed: the worker parses the same declarations, so it takes the same default.
     */
    List<String> givenOptions(String... driverOnly) {
        Set<String> skip = Set.of(driverOnly);
        List<String> out = new ArrayList<>();
        for (OptionSpec o : command.commandLine().getParseResult().matchedOptions()) {
            String name = o.longestName();
            if (o.usageHelp() || o.versionHelp() || skip.contains(name)
                    || List.of(o.names()).stream().anyMatch(OWN_OPTIONS::contains)) {
                continue;
            }
            if (o.arity().max() == 0) {
                boolean on = Boolean.TRUE.equals(o.getValue());
                out.add(on || !o.negatable() ? name : "--no-" + name.substring(2));
            } else {
                for (String value : o.originalStringValues()) {
                    out.add(name);
                    out.add(value);
                }
            }
        }
        return out;
    }

    /**
     * Starts {@code bench NAME --worker -np N options... [--json]} as N local processes (see {@link #start}) with
     * the {@link #givenOptions}, rank 0's results to standard output.
     *
     * @return 0 if every worker exited 0, else the first failure's exit status
     */
    int launch(String bench, int np) {
        List<String> args = givenOptions();
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
