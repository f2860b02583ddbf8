package dev.kolo.samples.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Every runnable command of {@code worker.jar} (the root and each leaf; a command with subcommands only groups
 * them) with its parameters and description, as the Markdown table of docs/running.md: made from the commands'
 * own declarations, so the documents cannot list a command that does not exist or miss one that does.
 */
final class CommandsTable {
    private CommandsTable() {
    }

    /** @return the table: a header, then one row per command in the order of their declaration */
    static String markdown(CommandLine root) {
        StringBuilder out = new StringBuilder("| command | what it does |\n|---|---|\n");
        for (CommandLine cmd : runnable(root, new ArrayList<>())) {
            CommandSpec spec = cmd.getCommandSpec();
            StringBuilder usage = new StringBuilder("java -jar worker.jar");
            for (CommandSpec s = spec; s.parent() != null; s = s.parent()) {
                usage.insert("java -jar worker.jar".length(), " " + s.name());
            }
            usage.append(spec.options().stream().anyMatch(o -> !o.usageHelp() && !o.versionHelp()) ? " [options]" : "");
            for (PositionalParamSpec p : spec.positionalParameters()) {
                usage.append(' ').append(p.paramLabel()).append(p.arity().max() > 1 ? "..." : "");
            }
            out.append("| `").append(usage).append("` | ")
                    .append(String.join(" ", spec.usageMessage().description()).replace("|", "\\|")).append(" |\n");
        }
        return out.toString();
    }

    private static List<CommandLine> runnable(CommandLine cmd, List<CommandLine> into) {
        if (cmd.getParent() == null || cmd.getSubcommands().isEmpty()) {
            into.add(cmd);
        }
        cmd.getSubcommands().forEach((name, sub) -> {
            if (!name.equals("help")) {
                runnable(sub, into);
            }
        });
        return into;
    }
}
