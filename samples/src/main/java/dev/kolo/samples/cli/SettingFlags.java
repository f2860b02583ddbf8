package dev.kolo.samples.cli;

import dev.kolo.runtime.Setting;
import dev.kolo.runtime.Settings;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The worker's flags, one per setting of the registry ({@link Settings#all()}: every module's) that has one,
 * with their help text from the same declarations. A flag wins over the setting's property and variable: it is
 * checked, then set as the property, so that every module (runtime, kernels, checkpoint, elastic) reads it as it
 * reads the environment.
 */
final class SettingFlags {
    private SettingFlags() {
    }

    /** Adds the settings' flags to a command. */
    static void addTo(CommandSpec command) {
        for (Setting<?> s : Settings.all()) {
            s.flag().ifPresent(flag -> command.addOption(option(s, flag)));
        }
    }

    private static OptionSpec option(Setting<?> s, String flag) {
        OptionSpec.Builder b = OptionSpec.builder(flag).type(String.class)
                .paramLabel(flag.substring(2).toUpperCase(Locale.ROOT).replace('-', '_'))
                .description(plain(s.description()) + " (" + s.name()
                        + (s.defaultText().isEmpty() ? "" : "; default: " + plain(s.defaultText())) + ").");
        if (s.defaultValue() instanceof Boolean) {
            b.arity("0..1").fallbackValue("true");
        }
        return b.build();
    }

    /**
     * Checks every flag given and makes it the value of its setting's system property.
     *
     * @throws IllegalArgumentException naming the flag, the value given and what it accepts
     */
    static void apply(CommandSpec command) {
        Map<String, String> properties = new LinkedHashMap<>();
        for (Setting<?> s : Settings.all()) {
            OptionSpec option = s.flag().map(command::findOption).orElse(null);
            String text = option == null ? null : option.getValue();
            if (text != null) {
                s.parse(text, s.flag().get());
                properties.put(s.property(), text.strip());
            }
        }
        properties.forEach(System::setProperty); // all or none: a refused flag leaves the process's settings as they were
    }

    /** Markdown as help text: backticks dropped. */
    private static String plain(String markdown) {
        return markdown.replace("`", "");
    }
}
