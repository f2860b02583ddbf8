package dev.kolo.samples.cli;

import dev.kolo.runtime.Settings;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.LocalLauncher;
import dev.kolo.samples.launch.NpOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code launch -np N -- [worker options]}: starts N local workers of one job, like {@code horovodrun -np N}.
 * Output lines are prefixed with {@code [rank]}; the first worker to fail ends the others and sets the exit
 * status, unless the job is elastic ({@code --min-np} below {@code -np}): then the others go on without it and
 * the launch fails only if no worker finishes. Ctrl-C stops them all (elastic workers leave gracefully).
 */
@Command(name = "launch", description = "Starts N local workers of one job and waits for them.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false,
        usageHelpAutoWidth = true)
final class LaunchCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--min-np", paramLabel = "N",
            description = "Fewest workers the job may go on with: below -np makes it elastic (KOLO_MIN_NP). A lost "
                    + "worker then no longer stops the others.")
    Integer minNp;

    @Option(names = "--max-np", paramLabel = "N",
            description = "Most workers of an elastic job (KOLO_MAX_NP; default: -np).")
    Integer maxNp;

    @Option(names = "--job", paramLabel = "NAME",
            description = "Job name (default: a fresh one per launch, so two launches never mix).")
    String job;

    @Option(names = "--grace", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long workers get to stop after SIGTERM before they are killed (default: ${DEFAULT-VALUE}).")
    double graceSeconds;

    @Parameters(paramLabel = "WORKER_OPTION", arity = "0..*",
            description = "Options passed to every worker (after --), e.g. -- --epochs 2.")
    List<String> workerArgs = new ArrayList<>();

    @Override
    public Integer call() {
        int np = workers.np();
        if (!(graceSeconds >= 0)) {
            throw new IllegalArgumentException("--grace must be 0 or more seconds (got " + graceSeconds + ")");
        }
        int min = minNp != null ? minNp : Settings.MIN_NP.fromEnvironment().orElse(0);
        int max = maxNp != null ? maxNp : Settings.MAX_NP.fromEnvironment().orElse(0);
        if (min < 0 || max < 0 || (min > 0 && min > np) || (max > 0 && max < np)) {
            throw new IllegalArgumentException("--min-np must be 1..-np and --max-np at least -np (got -np " + np
                    + ", --min-np " + min + ", --max-np " + max + ")");
        }
        String jobName = job != null ? job : "launch-" + UUID.randomUUID().toString().substring(0, 8);
        LocalLauncher launcher = new LocalLauncher(jobName, np, workerArgs, (long) (graceSeconds * 1000))
                .elastic(min, max);
        return launcher.run();
    }
}
