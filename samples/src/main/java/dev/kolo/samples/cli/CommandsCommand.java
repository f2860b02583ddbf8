package dev.kolo.samples.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Prints every command of worker.jar, as docs/running.md's table of commands shows them. */
@Command(name = "commands", mixinStandardHelpOptions = true,
        description = "Print every command of worker.jar with what it does, as a Markdown table.")
final class CommandsCommand implements Callable<Integer> {
    /** This command's place in worker.jar's command line, whose root holds every command. */
    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        System.out.print(CommandsTable.markdown(spec.root().commandLine()));
        return 0;
    }
}
