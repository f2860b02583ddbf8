package dev.kolo.runtime;

import java.util.List;

/**
 * The settings of a module built on the runtime (checkpoint, elastic, ...), which the runtime cannot name: the
 * module's settings class implements this interface and is listed in the module's
 * {@code META-INF/services/dev.kolo.runtime.ModuleSettings}, so that {@link Settings#all()} finds it with
 * {@link java.util.ServiceLoader} whenever the module is on the class path. Its settings are its
 * {@code public static final} {@link Setting} fields, in the order they are declared: declaring a field is all
 * it takes to add a setting to the environment reader, the worker's flags, {@code --help} and the settings table of docs/configuration.md.
 *
 * <p>The class needs a public no-argument constructor for {@link java.util.ServiceLoader}; nothing else creates
 * one.
 */
public interface ModuleSettings {
    /**
     * @return the module's name, e.g. {@code checkpoint}; the registry lists the modules' settings after the
     *         runtime's, in the order of these names, whatever the order of the class path
     */
    String module();

    /** @return the module's settings: the {@code public static final} {@link Setting} fields of this class */
    default List<Setting<?>> settings() {
        return SettingRegistry.declaredIn(getClass());
    }
}
