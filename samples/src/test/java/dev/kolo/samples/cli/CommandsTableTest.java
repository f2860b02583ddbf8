package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The table of commands in docs/running.md lists exactly the commands worker.jar has. */
class CommandsTableTest {
    private static final Pattern ROW = Pattern.compile("^\\| `java -jar worker\\.jar((?: [a-z]+)*)");

    @Test
    void theReadmeListsEveryCommandAndNoOther() throws Exception {
        TreeSet<String> documented = new TreeSet<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(Path.of("..", "docs", "running.md"))) {
            if (line.startsWith("## Commands")) {
                inTable = true;
            } else if (inTable && line.startsWith("## ")) {
                break;
            } else if (inTable) {
                Matcher m = ROW.matcher(line);
                if (m.find()) {
                    documented.add(m.group(1).strip());
                }
            }
        }
        TreeSet<String> commands = new TreeSet<>();
        collect(WorkerCli.commandLine(), "", commands);
        assertEquals(commands, documented, "docs/running.md's table of commands against worker.jar's commands");
    }

    /** Runnable commands: the root and every leaf (a command with subcommands only groups them). */
    private static void collect(CommandLine cmd, String path, TreeSet<String> into) {
        if (path.isEmpty() || cmd.getSubcommands().isEmpty()) {
            into.add(path);
        }
        cmd.getSubcommands().forEach((name, sub) -> {
            if (!name.equals("help")) {
                collect(sub, (path + " " + name).strip(), into);
            }
        });
    }
}
