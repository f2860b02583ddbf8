package dev.kolo.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code launch -np N -- [worker options]}: starts N local workers of one job, like {@code horovodrun -np N}.
 * Output lines are prefixed with {@code [rank]}; the first worker to fail ends the others and sets the exit
 * status; Ctrl-C stops them all.
 */
@Command(name = "launch", description = "Starts N local workers of one job and waits for them.",
        mixinStandardHelpOptions = true, versionProvider = WorkerCli.Version.class, sortOptions = false,
        usageHelpAutoWidth = true)
final class LaunchCommand implements Callable<Integer> {
    @Option(names = {"-np", "--np"}, required = true, paramLabel = "N", description = "Number of workers.")
    int np;

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
        if (np < 1) {
            throw new IllegalArgumentException("-np must be at least 1 (got " + np + ")");
        }
        if (!(graceSeconds >= 0)) {
            throw new IllegalArgumentException("--grace must be 0 or more seconds (got " + graceSeconds + ")");
        }
        String jobName = job != null ? job : "launch-" + UUID.randomUUID().toString().substring(0, 8);
        LocalLauncher launcher = new LocalLauncher(jobName, np, workerArgs, (long) (graceSeconds * 1000));
        return launcher.run();
    }
}
