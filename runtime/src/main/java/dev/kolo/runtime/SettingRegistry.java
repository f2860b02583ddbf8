package dev.kolo.runtime;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * Gathers every setting behind {@link Settings#all()}: the {@code public static final} {@link Setting} fields of
 * {@link Settings}, then those of each {@link ModuleSettings} on the class path. No list is kept by hand, so a
 * setting is declared in one place only: its field.
 */
final class SettingRegistry {
    private SettingRegistry() {
    }

    /** @return every setting, gathered on first use (a module's settings class may use {@link Settings}' bounds) */
    static List<Setting<?>> all() {
        return Holder.ALL;
    }

    /**
     * The {@code public static final} {@link Setting} fields of {@code type}, in the order the class file holds
     * them, which is the order of the source (HotSpot keeps it; SettingsTableTest checks it for {@link Settings}).
     */
    static List<Setting<?>> declaredIn(Class<?> type) {
        List<Setting<?>> out = new ArrayList<>();
        for (Field f : type.getDeclaredFields()) {
            int m = f.getModifiers();
            if (f.getType() == Setting.class && Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m)) {
                try {
                    out.add((Setting<?>) f.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("cannot read setting " + type.getName() + "." + f.getName(), e);
                }
            }
        }
        return out;
    }

    private static List<Setting<?>> gather() {
        List<ModuleSettings> modules = new ArrayList<>();
        // This class's loader, not the thread's: the registry is built once, whichever thread asks first.
        ServiceLoader.load(ModuleSettings.class, SettingRegistry.class.getClassLoader()).forEach(modules::add);
        // Sorted, so that the table and the flags do not depend on the order of the class path.
        modules.sort(Comparator.comparing(ModuleSettings::module));
        List<Setting<?>> all = new ArrayList<>(declaredIn(Settings.class));
        for (ModuleSettings m : modules) {
            all.addAll(m.settings());
        }
        Set<String> names = new HashSet<>();
        Set<String> flags = new HashSet<>();
        for (Setting<?> s : all) {
            // Two declarations of one variable or flag would make one setting read the other's value.
            if (!names.add(s.name()) || s.flag().isPresent() && !flags.add(s.flag().get())) {
                throw new IllegalStateException(s.label() + " is declared twice, or its flag is another's");
            }
        }
        return List.copyOf(all);
    }

    /** Initialized on the first call of {@link #all()}: the lazy holder idiom, thread-safe by class loading. */
    private static final class Holder {
        static final List<Setting<?>> ALL = gather();
    }
}
