package dev.kolo.samples.cli;

import dev.kolo.runtime.Settings;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Prints every setting of every module, as docs/configuration.md's settings table shows them. */
@Command(name = "settings", mixinStandardHelpOptions = true,
        description = "Print every KOLO_* setting (variable, flag, default, meaning) as a Markdown table.")
final class SettingsCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.out.print(Settings.markdownTable());
        return 0;
    }
}
