package dev.kolo.samples.launch;

import dev.kolo.runtime.jvm.JvmOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Kolo's JVM options ({@link JvmOptions}) for the processes that {@code launch} and the benchmarks start, so that
 * a program runs without flags of its own. A command that runs the {@code java} launcher itself gets the options
 * it lacks on its command line, right after {@code java} ({@link #withOptions}); any other command (a script that
 * runs java) gets them appended to {@value #JDK_JAVA_OPTIONS}, which every {@code java} launcher of JDK 9 and later
 * reads, by the worker's wrapper on the host where the worker runs ({@link #appendToJdkJavaOptions}), so that what
 * the variable holds there stays. {@code JAVA_TOOL_OPTIONS} (which the container image sets) is left as it is.
 * The options are those every supported JDK accepts, so that the {@code java} the program runs need not be known.
 */
public final class ChildJvmOptions {
    /** The variable the {@code java} launcher reads options from, ahead of its command line. */
    static final String JDK_JAVA_OPTIONS = "JDK_JAVA_OPTIONS";
    /** Launcher options whose value is the next word (or follows {@code =}). */
    private static final Set<String> WITH_VALUE = Set.of("-cp", "-classpath", "--class-path", "-p", "--module-path",
            "--upgrade-module-path", "--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
            "--patch-module", "--enable-native-access", "--source");
    /** Words after which the rest is the program and its arguments, not options of the JVM. */
    private static final Set<String> PROGRAM = Set.of("-jar", "-m", "--module");
    /** What any setting of {@code sun.misc.Unsafe}'s memory access counts as: the user's choice stands. */
    private static final String UNSAFE_KEY = "unsafe-memory-access";

    private ChildJvmOptions() {
    }

    /** @return whether {@code command} runs the {@code java} launcher itself (its first word's base name is java) */
    public static boolean runsJava(List<String> command) {
        if (command.isEmpty()) {
            return false;
        }
        Path name = Path.of(command.get(0)).getFileName();
        return name != null && name.toString().equals("java");
    }

    /**
     * @return {@code command} with the options of {@link JvmOptions#all()} that its JVM options do not give already
     *     inserted right after {@code java}; a command that does not run {@code java} as it is
     */
    public static List<String> withOptions(List<String> command) {
        if (!runsJava(command)) {
            return List.copyOf(command);
        }
        List<String> out = new ArrayList<>();
        out.add(command.get(0));
        out.addAll(missingFrom(command.subList(1, command.size())));
        out.addAll(command.subList(1, command.size()));
        return List.copyOf(out);
    }

    /**
     * @param javaArguments the words after {@code java}: JVM options, then the program (a main class, {@code -jar
     *     FILE}, {@code -m MODULE}) and its arguments, which are not read
     * @return the options of {@link JvmOptions#all()} those JVM options give no equivalent of
     */
    static List<String> missingFrom(List<String> javaArguments) {
        Set<String> given = new LinkedHashSet<>();
        for (int i = 0; i < javaArguments.size(); i++) {
            String arg = javaArguments.get(i);
            if (PROGRAM.contains(arg) || arg.startsWith("--module=") || !arg.startsWith("-")) {
                break; // @argfiles start with '@' and are not read: an option given twice does no harm
            }
            int eq = arg.indexOf('=');
            String name = arg.startsWith("--") && eq > 0 ? arg.substring(0, eq) : arg;
            if (WITH_VALUE.contains(name)) {
                String value = eq > 0 && arg.startsWith("--") ? arg.substring(eq + 1)
                        : i + 1 < javaArguments.size() ? javaArguments.get(++i) : "";
                given.addAll(keys(name, value));
            } else {
                given.addAll(keys(arg, ""));
            }
        }
        List<String> missing = new ArrayList<>();
        for (String option : JvmOptions.all()) {
            int eq = option.indexOf('=');
            if (!given.containsAll(keys(option.substring(0, eq), option.substring(eq + 1)))) {
                missing.add(option);
            }
        }
        return missing;
    }

    /**
     * What an option grants, in a form that compares equal however it was written: {@code --add-opens X=A,B} as
     * {@code --add-opens=X=A} and {@code --add-opens=X=B}; the Unsafe switch and its property as one key.
     */
    private static List<String> keys(String name, String value) {
        if (name.startsWith("-D" + JvmOptions.UNSAFE_MEMORY_ACCESS + "=")
                || name.equals("-D" + JvmOptions.UNSAFE_MEMORY_ACCESS)
                || name.startsWith("--sun-misc-unsafe-memory-access")) {
            return List.of(UNSAFE_KEY);
        }
        List<String> keys = new ArrayList<>();
        switch (name) {
            case "--add-opens", "--add-exports" -> {
                int eq = value.indexOf('=');
                if (eq > 0) {
                    for (String target : value.substring(eq + 1).split(",")) {
                        keys.add(name + "=" + value.substring(0, eq) + "=" + target);
                    }
                }
            }
            case "--add-modules", "--enable-native-access" -> {
                for (String module : value.split(",")) {
                    keys.add(name + "=" + module);
                }
            }
            default -> {
                // an option Kolo does not give: nothing to compare
            }
        }
        return keys;
    }

    /**
     * @param options the options to give, each one word without quotes or spaces
     * @return POSIX shell lines that append each of {@code options} not already in it to {@value #JDK_JAVA_OPTIONS}
     *     and export it, keeping what it held; empty for no options
     */
    static String appendToJdkJavaOptions(List<String> options) {
        if (options.isEmpty()) {
            return "";
        }
        StringBuilder words = new StringBuilder();
        options.forEach(o -> words.append(' ').append(WorkerWrapper.quote(o)));
        String v = JDK_JAVA_OPTIONS;
        return "for o in" + words + "; do case \" $" + v + " \" in *\" $o \"*) ;; *) " + v + "=\"${" + v + ":+$" + v
                + " }$o\" ;; esac; done; export " + v;
    }
}
