package dev.kolo.samples.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Prints every command of worker.jar, as docs/running.md's table of commands shows them. */
@Command(name = "commands", mixinStandardHelpOptions = true,
        description = "Print every command of worker.jar with what it does, as a Markdown table.")
final class CommandsCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.out.print(CommandsTable.markdown(WorkerCli.commandLine()));
        return 0;
    }
}
