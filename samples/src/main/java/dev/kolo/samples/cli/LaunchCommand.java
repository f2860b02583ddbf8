package dev.kolo.samples.cli;

import dev.kolo.runtime.JobSecrets;
import dev.kolo.runtime.Settings;
import dev.kolo.samples.launch.HostSlots;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.NpOption;
import dev.kolo.samples.launch.RankOutput;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code launch -np N [-H host:slots,...] [--] [COMMAND [ARGS...]]}: starts N workers of one job, like {@code
 * horovodrun -np N -H ...}: COMMAND (any program that calls {@code Kolo.init()}), or the sample worker when the
 * words after {@code --} are options or absent. Every worker gets the environment that makes {@code Kolo.init()}
 * join this job, and a fresh job secret on its standard input. Output lines are prefixed with {@code [rank]};
 * the first worker to fail ends the others and sets the exit status, unless the job is elastic ({@code --min-np}
 * below {@code -np}): then the others go on without it and the launch fails only if no worker finishes.
 * Ctrl-C stops them all (elastic workers leave gracefully).
 */
@Command(name = "launch", description = "Starts N workers of one job, here or on other hosts over SSH, and waits "
        + "for them.", mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false,
        usageHelpAutoWidth = true)
final class LaunchCommand implements Callable<Integer> {
    /** Bytes of randomness in a launch's job secret. */
    static final int SECRET_BYTES = 32;

    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--min-np", paramLabel = "N",
            description = "Fewest workers the job may go on with: below -np makes it elastic (KOLO_MIN_NP). A lost "
                    + "worker then no longer stops the others.")
    Integer minNp;

    @Option(names = "--max-np", paramLabel = "N",
            description = "Most workers of an elastic job (KOLO_MAX_NP; default: -np).")
    Integer maxNp;

    @Option(names = "-H", paramLabel = "HOST[:SLOTS],...",
            description = "Hosts and how many workers each runs (default 1), filled in order; other hosts are "
                    + "reached over SSH (default: every worker on this machine).")
    String hostList;

    @Option(names = "--hostfile", paramLabel = "FILE",
            description = "Hosts from a file: one per line, 'host slots=N' or 'host:N'; '#' starts a comment.")
    Path hostfile;

    @Option(names = "--ssh-option", paramLabel = "OPTION",
            description = "An option for the SSH client, passed as -o OPTION (repeatable), e.g. "
                    + "--ssh-option Port=2222 --ssh-option IdentityFile=~/.ssh/kolo.")
    List<String> sshOptions = new ArrayList<>();

    @Option(names = "--log-dir", paramLabel = "DIR",
            description = "Also write each rank's output to DIR/rank.N.log; the ranks' flight recorder files go there "
                    + "too (KOLO_FLIGHT_DIR, unless set).")
    Path logDir;

    @Option(names = "--output-ranks", paramLabel = "RANKS", defaultValue = "all",
            description = "Whose output reaches the terminal: all, none, or ranks and ranges such as 0,2-3 "
                    + "(default: ${DEFAULT-VALUE}).")
    String outputRanks;

    @Option(names = "--job", paramLabel = "NAME",
            description = "Job name (default: a fresh one per launch, so two launches never mix).")
    String job;

    @Option(names = "--grace", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long workers get to stop after SIGTERM before they are killed (default: ${DEFAULT-VALUE}).")
    double graceSeconds;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "The program every worker runs, with its arguments (after --, e.g. -- java -cp app.jar "
                    + "my.Train). When the words after -- start with '-' (or there are none), they are options for "
                    + "the sample worker instead, e.g. -- --epochs 2.")
    List<String> commandLine = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        int np = workers.np();
        if (!(graceSeconds >= 0) || graceSeconds > 3600) {
            throw new IllegalArgumentException("--grace must be 0 to 3600 seconds (got " + graceSeconds + ")");
        }
        int min = minNp != null ? minNp : Settings.MIN_NP.fromEnvironment().orElse(0);
        int max = maxNp != null ? maxNp : Settings.MAX_NP.fromEnvironment().orElse(0);
        if (min < 0 || max < 0 || (min > 0 && min > np) || (max > 0 && max < np)) {
            throw new IllegalArgumentException("--min-np must be 1..-np and --max-np at least -np (got -np " + np
                    + ", --min-np " + min + ", --max-np " + max + ")");
        }
        if (hostList != null && hostfile != null) {
            throw new IllegalArgumentException("-H and --hostfile both name hosts: give one of them");
        }
        List<HostSlots.Host> hosts = hostList != null ? HostSlots.parse(hostList)
                : hostfile != null ? HostSlots.read(hostfile) : List.of();
        String jobName = job != null ? job : "launch-" + UUID.randomUUID().toString().substring(0, 8);
        Launcher.Builder launch = Launcher.builder(jobName, np).elastic(min, max).hosts(hosts)
                .sshOptions(sshOptions).graceMillis((long) (graceSeconds * 1000)).secret(secret());
        if (logDir != null && Settings.FLIGHT_DIR.fromEnvironment().isEmpty()) {
            launch.environment(Settings.FLIGHT_DIR.name(), logDir.toAbsolutePath().toString());
        }
        if (!commandLine.isEmpty() && !commandLine.get(0).startsWith("-")) {
            launch.command(commandLine);
        } else {
            launch.workerArgs(commandLine);
        }
        try (RankOutput output = new RankOutput(System.out, RankOutput.parseRanks(outputRanks), logDir)) {
            return launch.sink(output).build().run();
        }
    }

    /**
     * The job's secret: the launcher's own (from {@code -Dkolo.job.secret}, {@code KOLO_JOB_SECRET} or {@code
     * KOLO_JOB_SECRET_FILE}) if given, else a fresh one for this launch. Either way it reaches the workers on
     * their standard input only.
     */
    private static String secret() {
        Optional<String> own = JobSecrets.fromEnvironment();
        if (own.isPresent()) {
            return own.get();
        }
        byte[] bytes = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
