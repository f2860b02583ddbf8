package dev.kolo.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The table of commands in docs/running.md is the one {@code worker.jar commands} makes from the commands'
 * declarations, and that table lists every runnable command, each once.
 */
class CommandsTableTest {
    static final String START = "<!-- commands: generated";
    static final String END = "<!-- end of commands -->";

    @Test
    void theRunningPageHoldsTheGeneratedTable() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "running.md"));
        int start = page.indexOf(START);
        int end = page.indexOf(END);
        assertTrue(start >= 0 && end > start, "docs/running.md marks its table of commands with " + START + " and " + END);
        assertEquals(CommandsTable.markdown(WorkerCli.commandLine()), page.substring(page.indexOf('\n', start) + 1, end),
                "docs/running.md's table of commands differs from the commands: paste the output of "
                        + "'java -jar worker.jar commands' between the markers");
    }

    @Test
    void theTableHasARowForEveryRunnableCommandAndNoOther() {
        List<String> expected = new ArrayList<>();
        collect(WorkerCli.commandLine(), "", expected);
        List<String> rows = new ArrayList<>();
        for (String line : CommandsTable.markdown(WorkerCli.commandLine()).split("\n")) {
            if (line.startsWith("| `java -jar worker.jar")) {
                rows.add(line.replaceFirst("^\\| `java -jar worker\\.jar((?: [a-z]+)*).*", "$1").strip());
            }
        }
        assertEquals(expected, rows);
        assertTrue(expected.contains("bench allreduce") && expected.contains("") && expected.contains("commands"));
    }

    /** Runnable commands: the root and every leaf (a command with subcommands only groups them). */
    private static void collect(CommandLine cmd, String path, List<String> into) {
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
