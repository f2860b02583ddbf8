package dev.kolo.runtime;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One setting of a Kolo worker, declared once as a {@code public static final} field of its module's settings
 * class ({@link Settings} for the runtime, a {@link ModuleSettings} for each module above it): its environment
 * variable, system property and command-line flag, its default, what values it accepts and one line saying what
 * it does. The builder of {@link KoloConfig}, the environment reader, the worker's flags, its {@code --help} and
 * the settings table of docs/configuration.md all come from these declarations, gathered by {@link Settings#all()}.
 *
 * <p>Every value is checked where it enters: text from the environment, a property or a flag by
 * {@link #parse(String, String)}, a typed value given to a builder by {@link #check(Object)}. A rejected value
 * gives one line naming the setting, the value given (never for a secret) and what is accepted.
 *
 * @param <T> the type of the setting's value
 */
public final class Setting<T> {
    private final String name;
    private final String flag;
    private final String defaultText;
    private final T defaultValue;
    private final Function<Values, T> derivedDefault;
    private final String accepted;
    private final String description;
    private final boolean secret;
    private final Function<String, T> parser;
    private final Predicate<T> valid;
    private final Function<T, String> formatter;

    private Setting(Builder<T> b) {
        this.name = b.name;
        this.flag = b.flag;
        this.defaultText = b.defaultText;
        this.defaultValue = b.defaultValue;
        this.derivedDefault = b.derivedDefault;
        this.accepted = b.accepted;
        this.description = b.description;
        this.secret = b.secret;
        this.parser = b.parser;
        this.valid = b.valid;
        this.formatter = b.formatter;
    }

    /**
     * Starts the declaration of a setting; {@link Builder#describe(String)} ends it.
     *
     * @param name the environment variable, {@code KOLO_} and capitals, e.g. {@code KOLO_CHECKPOINT_DIR}
     * @param parser text to value; null or an {@link IllegalArgumentException} for text it does not take
     */
    public static <T> Builder<T> named(String name, Function<String, T> parser) {
        if (!name.matches("KOLO_[A-Z0-9_]+")) {
            // The property name is derived from it: kolo. plus the rest in lower case, dots for underscores.
            throw new IllegalArgumentException("a setting's name is KOLO_ and capitals, digits or '_' (got " + name
                    + ")");
        }
        return new Builder<>(name, parser);
    }

    /** @return the environment variable, e.g. {@code KOLO_MIN_NP}; also the setting's name in messages */
    public String name() {
        return name;
    }

    /** @return the system property, e.g. {@code kolo.min.np} (it wins over the environment variable) */
    public String property() {
        return propertyOf(name);
    }

    /** @return the worker's flag, e.g. {@code --min-np}; empty for a secret, which a command line would show */
    public Optional<String> flag() {
        return Optional.ofNullable(flag);
    }

    /** @return the value when the setting is not given, or null when unset means "none" or is derived */
    public T defaultValue() {
        return defaultValue;
    }

    /**
     * @param others the values of the other settings of the same configuration
     * @return the value when the setting is not given: the declared default, or the one the declaration derives
     *         from {@code others}
     */
    public T defaultIn(Values others) {
        return derivedDefault != null ? derivedDefault.apply(others) : defaultValue;
    }

    /** @return the default as documented (Markdown), empty when there is none */
    public String defaultText() {
        return defaultText;
    }

    /** @return what the setting accepts, as it completes "must be ..." */
    public String accepted() {
        return accepted;
    }

    /** @return one line saying what the setting does (Markdown) */
    public String description() {
        return description;
    }

    /** @return the setting's name with its flag, e.g. {@code KOLO_NP (--np)}, as messages name it */
    public String label() {
        return flag == null ? name : name + " (" + flag + ")";
    }

    /**
     * Parses and checks a value given as text. Surrounding blanks are ignored.
     *
     * @param text the value as given
     * @param origin where it was given, as the message should name it: {@code KOLO_NP}, {@code -Dkolo.np} or
     *        {@code --np}
     * @return the value
     * @throws IllegalArgumentException naming the origin, the value given and what is accepted
     */
    public T parse(String text, String origin) {
        T value;
        try {
            value = parser.apply(text.strip());
        } catch (IllegalArgumentException e) {
            value = null; // NumberFormatException and unknown names alike: answered by the message below
        }
        if (value == null || !valid.test(value)) {
            throw new IllegalArgumentException(origin + " must be " + accepted + " (got " + echo(text) + ")");
        }
        return value;
    }

    /**
     * Checks a typed value, as given to a builder.
     *
     * @return the value
     * @throws IllegalArgumentException naming the setting, the value given and what is accepted
     */
    public T check(T value) {
        if (value == null || !valid.test(value)) {
            throw new IllegalArgumentException(label() + " must be " + accepted + " (got "
                    + (value == null ? "nothing" : secret ? "a secret" : formatter.apply(value)) + ")");
        }
        return value;
    }

    /**
     * Reads the setting from its system property, else its environment variable; a blank value counts as unset.
     *
     * @return the checked value, or empty when neither is set
     * @throws IllegalArgumentException naming the property or variable whose value is not accepted
     */
    public Optional<T> fromEnvironment() {
        return read(SettingSource.system());
    }

    Optional<T> read(SettingSource source) {
        String property = source.raw(property());
        if (property != null && !property.isBlank()) {
            return Optional.of(parse(property, "-D" + property()));
        }
        String env = source.raw(name);
        if (env != null && !env.isBlank()) {
            return Optional.of(parse(env, name));
        }
        return Optional.empty();
    }

    private String echo(String text) {
        return secret ? "a value of " + text.strip().length() + " characters" : "'" + text + "'";
    }

    static String propertyOf(String envName) {
        return "kolo." + envName.substring("KOLO_".length()).toLowerCase(Locale.ROOT).replace('_', '.');
    }

    @Override
    public String toString() {
        return name;
    }

    /** The values of one configuration's settings, as a default derived from other settings reads them. */
    public interface Values {
        /** @return the value of {@code setting}: given, else its default */
        <T> T get(Setting<T> setting);
    }

    /** Where settings are read from: a function from a variable or property name to its raw value. */
    @FunctionalInterface
    interface SettingSource {
        String raw(String name);

        /** {@code kolo.*} names are system properties, {@code KOLO_*} environment variables; others either. */
        static SettingSource system() {
            return name -> {
                if (name.startsWith("kolo.")) {
                    return System.getProperty(name);
                }
                String property = name.startsWith("KOLO_") ? null : System.getProperty(name);
                return property != null ? property : System.getenv(name);
            };
        }
    }

    /**
     * Declares a setting. {@link #accepts} is required (every value is checked where it enters); the rest is
     * optional: without {@link #flag} the setting has no flag, without {@link #byDefault} no default.
     *
     * @param <T> the type of the setting's value
     */
    public static final class Builder<T> {
        private final String name;
        private final Function<String, T> parser;
        private String flag;
        private String defaultText = "";
        private T defaultValue;
        private Function<Values, T> derivedDefault;
        private String accepted;
        private String description;
        private boolean secret;
        private Predicate<T> valid = v -> true;
        private Function<T, String> formatter = String::valueOf;

        private Builder(String name, Function<String, T> parser) {
            this.name = name;
            this.parser = parser;
        }

        /** The worker's flag, e.g. {@code --checkpoint-dir}; none for a secret (a command line is visible to all). */
        public Builder<T> flag(String f) {
            this.flag = f;
            return this;
        }

        /** The value when unset (null: none, or derived elsewhere) and how the documentation states it (Markdown). */
        public Builder<T> byDefault(T value, String text) {
            this.defaultValue = value;
            this.defaultText = text;
            return this;
        }

        /** The value when unset, documented as its {@code String.valueOf}. */
        public Builder<T> byDefault(T value) {
            return byDefault(value, String.valueOf(value));
        }

        /**
         * The value when unset derived from the other settings of the same configuration (which must not derive
         * theirs from this one), and how the documentation states it (Markdown).
         */
        public Builder<T> derivedFrom(Function<Values, T> derive, String text) {
            this.derivedDefault = derive;
            this.defaultText = text;
            return this;
        }

        /** What the setting accepts, completing "must be ..." in messages, and the check of a parsed value. */
        public Builder<T> accepts(String text, Predicate<T> check) {
            this.accepted = text;
            this.valid = check;
            return this;
        }

        /** How a rejected typed value is shown in the message (default: {@code String.valueOf}). */
        public Builder<T> shownAs(Function<T, String> f) {
            this.formatter = f;
            return this;
        }

        /** Marks the value secret: messages never echo it. */
        public Builder<T> secret() {
            this.secret = true;
            return this;
        }

        /** Ends the declaration with one line saying what the setting does (Markdown). */
        public Setting<T> describe(String text) {
            this.description = text;
            Objects.requireNonNull(accepted, name);
            return new Setting<>(this);
        }
    }
}
