package dev.kolo.runtime.jvm;

import java.lang.module.ModuleFinder;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The JVM options a Kolo worker wants, declared once. Hazelcast (Kolo's cluster membership) reads JDK internals
 * for its fastest paths and its JVM metrics and warns at start when a package is not open to it; on JDK 24 and
 * later the JDK itself warns about Hazelcast's use of {@code sun.misc.Unsafe} and about native libraries loaded
 * from the class path (Kolo's kernels), unless allowed. {@code worker.jar launch} gives these options to every
 * worker it starts ({@link #all()}); {@code Kolo.init()} names the ones its JVM lacks ({@link #missing(Module)}).
 *
 * <p>Every option here is accepted by each JDK Kolo supports (17, 21, 25), so that a launcher can hand them to a
 * program whose {@code java} it does not know: the JDK 23+ switch {@code --sun-misc-unsafe-memory-access=allow},
 * which JDK 17 and 21 refuse to start with, is given as the system property that switch sets
 * ({@value #UNSAFE_MEMORY_ACCESS}), which they ignore. {@code --enable-native-access=ALL-UNNAMED} exists since
 * JDK 17. They grant the unnamed module ({@value #TARGET}): Kolo and Hazelcast on the class path.
 *
 * <p>A jar run by {@code java -jar} can carry the module access in its manifest instead ({@link #manifestAddOpens()},
 * {@link #manifestAddExports()}, {@code Enable-Native-Access: ALL-UNNAMED}); a manifest cannot set a system
 * property, so on JDK 24+ the {@code Unsafe} warning stays unless {@value #UNSAFE_MEMORY_ACCESS} is given too.
 */
public final class JvmOptions {
    /** The module the options grant access to: the unnamed module, i.e. every class on the class path. */
    public static final String TARGET = "ALL-UNNAMED";
    /**
     * The system property behind JDK 23+'s {@code --sun-misc-unsafe-memory-access}: given as
     * {@code -Dsun.misc.unsafe.memory.access=allow}, JDK 24+ allows {@code sun.misc.Unsafe}'s memory access without
     * a warning, and JDK 17 and 21 ignore it.
     */
    public static final String UNSAFE_MEMORY_ACCESS = "sun.misc.unsafe.memory.access";
    /** The first JDK that warns about {@code sun.misc.Unsafe}'s memory access and about native access by default. */
    static final int FIRST_WARNING_JDK = 24;
    /** Packages Hazelcast reflects into ({@code module/package}), as Hazelcast 5.6's own start-up check lists them. */
    private static final List<String> OPENS = List.of("java.base/java.lang", "java.base/sun.nio.ch",
            "java.management/sun.management", "jdk.management/com.sun.management.internal");
    /** Packages Hazelcast links against without reflection. */
    private static final List<String> EXPORTS = List.of("java.base/jdk.internal.ref");
    /** Resolves every Java SE module, as Hazelcast advises, also for a program on the module path. */
    private static final String ADD_MODULES = "--add-modules=java.se";
    private static final String NATIVE_ACCESS = "--enable-native-access=" + TARGET;
    private static final String UNSAFE = "-D" + UNSAFE_MEMORY_ACCESS + "=allow";

    private JvmOptions() {
    }

    /**
     * @return every option, one command-line word each ({@code --add-opens=java.base/java.lang=ALL-UNNAMED}), in the
     *     form that works on a {@code java} command line, in {@code JDK_JAVA_OPTIONS} and in a build's
     *     {@code argLine} alike
     */
    public static List<String> all() {
        List<String> all = new ArrayList<>();
        all.add(ADD_MODULES);
        EXPORTS.forEach(p -> all.add("--add-exports=" + p + "=" + TARGET));
        OPENS.forEach(p -> all.add("--add-opens=" + p + "=" + TARGET));
        all.add(NATIVE_ACCESS);
        all.add(UNSAFE);
        return List.copyOf(all);
    }

    /** @return the value of a jar manifest's {@code Add-Opens} attribute that grants the same packages */
    public static String manifestAddOpens() {
        return String.join(" ", OPENS);
    }

    /** @return the value of a jar manifest's {@code Add-Exports} attribute that grants the same packages */
    public static String manifestAddExports() {
        return String.join(" ", EXPORTS);
    }

    /**
     * The options of {@link #all()} whose effect this JVM lacks for {@code module} (the module Hazelcast is in:
     * the unnamed module on the class path). A package counts when its module is in the boot layer and holds it,
     * as in Hazelcast's own check; {@code --add-modules=java.se} when such a module is in the runtime but not
     * resolved; the switches for native access and {@code sun.misc.Unsafe} only on JDK 24 and
     * later, where their absence warns (an {@value #UNSAFE_MEMORY_ACCESS} set to any value is the user's choice).
     *
     * @return the missing options, in the order of {@link #all()}; empty when nothing is missing
     */
    public static List<String> missing(Module module) {
        ModuleLayer boot = ModuleLayer.boot();
        List<String> missing = new ArrayList<>();
        if (unresolved(boot)) {
            missing.add(ADD_MODULES);
        }
        for (String p : EXPORTS) {
            if (lacks(boot, p, module, false)) {
                missing.add("--add-exports=" + p + "=" + TARGET);
            }
        }
        for (String p : OPENS) {
            if (lacks(boot, p, module, true)) {
                missing.add("--add-opens=" + p + "=" + TARGET);
            }
        }
        if (Runtime.version().feature() >= FIRST_WARNING_JDK) {
            if (!nativeAccessEnabled(module)) {
                missing.add(NATIVE_ACCESS);
            }
            if (System.getProperty(UNSAFE_MEMORY_ACCESS) == null) {
                missing.add(UNSAFE);
            }
        }
        return List.copyOf(missing);
    }

    /**
     * Whether a module whose packages the options grant is in this runtime but not resolved (a program on the
     * module path that requires none of them): {@code --add-modules=java.se} resolves it. The aggregator
     * {@code java.se} itself is never in the boot layer of a class-path program, whose default roots are the
     * modules that export a package, so it is not looked for.
     */
    private static boolean unresolved(ModuleLayer boot) {
        List<String> modules = new ArrayList<>();
        OPENS.forEach(p -> modules.add(p.substring(0, p.indexOf('/'))));
        EXPORTS.forEach(p -> modules.add(p.substring(0, p.indexOf('/'))));
        ModuleFinder system = ModuleFinder.ofSystem();
        return modules.stream().anyMatch(m -> boot.findModule(m).isEmpty() && system.find(m).isPresent());
    }

    private static boolean lacks(ModuleLayer boot, String modulePackage, Module module, boolean open) {
        int slash = modulePackage.indexOf('/');
        String pkg = modulePackage.substring(slash + 1);
        Optional<Module> source = boot.findModule(modulePackage.substring(0, slash));
        if (source.isEmpty() || !source.get().getPackages().contains(pkg)) {
            return false; // not in this JVM (another vendor's JDK, a trimmed runtime): nothing to grant
        }
        return open ? !source.get().isOpen(pkg, module) : !source.get().isExported(pkg, module);
    }

    /** {@code Module.isNativeAccessEnabled()}, which JDK 22 added: called by name, as Kolo's bytecode is JDK 17's. */
    private static boolean nativeAccessEnabled(Module module) {
        try {
            Method enabled = Module.class.getMethod("isNativeAccessEnabled");
            return (Boolean) enabled.invoke(module);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return true; // cannot tell: say nothing rather than something wrong
        }
    }
}
