package dev.kolo.samples.cli;

import dev.kolo.runtime.KoloConfigurationException;
import dev.kolo.runtime.KoloException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code worker.jar}. With no subcommand it runs one worker of a job; {@code launch} starts
 * several local workers like {@code horovodrun -np N}.
 */
public final class WorkerCli {
    private WorkerCli() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns the process exit code; user mistakes print one line, no stack trace. */
    static int run(String... args) {
        CommandLine cli = commandLine();
        return cli.execute(args);
    }

    static CommandLine commandLine() {
        CommandLine.Model.CommandSpec worker = CommandLine.Model.CommandSpec.forAnnotatedObject(new WorkerCommand());
        SettingFlags.addTo(worker);
        CommandLine cli = new CommandLine(worker);
        // After the first word that is not an option (the command to launch), every word is the command's.
        cli.addSubcommand("launch", new CommandLine(new LaunchCommand()).setStopAtPositional(true));
        cli.addSubcommand("bench", new BenchCommand());
        cli.addSubcommand("checkpoint", new CheckpointCommand());
        cli.addSubcommand("settings", new SettingsCommand());
        cli.addSubcommand("commands", new CommandsCommand());
        cli.addSubcommand("timeline", new TimelineCommand());
        cli.addSubcommand("flight", new FlightCommand());
        cli.setParameterExceptionHandler(WorkerCli::onBadArguments);
        cli.setExecutionExceptionHandler(WorkerCli::onFailure);
        return cli;
    }

    private static int onBadArguments(CommandLine.ParameterException e, String[] args) {
        PrintWriter err = e.getCommandLine().getErr();
        err.println(commandName(e.getCommandLine()) + ": " + e.getMessage() + " (see --help)");
        err.flush();
        return CommandLine.ExitCode.USAGE;
    }

    private static int onFailure(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        if (e instanceof KoloConfigurationException || e instanceof IllegalArgumentException) {
            // A setting or argument that retrying does not fix: a status of its own, so that a supervisor
            // (Kubernetes' podFailurePolicy) stops instead of restarting.
            err.println("kolo: error: " + e.getMessage());
            err.flush();
            return KoloConfigurationException.EXIT_STATUS;
        }
        if (e instanceof KoloException) {
            // A job problem the user can act on (a port taken, a rendezvous that timed out): the message says what.
            err.println("kolo: error: " + e.getMessage());
            err.flush();
            return 1;
        }
        err.println("kolo: internal error: " + e);
        e.printStackTrace(err);
        err.flush();
        return 70;
    }

    private static String commandName(CommandLine cmd) {
        return cmd.getCommandSpec().qualifiedName();
    }
}
