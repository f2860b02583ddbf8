package dev.kolo.testing;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The limits of {@link ModuleRules} as tests: a module's architecture test extends this and names its sources
 * ({@link #modules()}), so that each module's build fails where it breaks one: a main class over the line limit, a
 * package over the file limit (but those the module names, each with its reason), an import circle between
 * packages, a class that refers to the class that creates it, a fuzz-seed directory no fuzz test reads.
 */
public abstract class ModuleLimits {
    /**
     * One module's main code as the rules see it.
     *
     * @param directory the module's directory, relative to the test's working directory (its own module's)
     * @param rootPackage the module's packages are this one and those below it
     * @param apiPackage its public API package, or null (see {@link ModuleRules#importCircles})
     * @param largePackages packages allowed above {@link ModuleRules#MAX_PACKAGE_FILES} files, each with its reason
     *        in the subclass
     */
    public record Module(String directory, String rootPackage, String apiPackage, Set<String> largePackages) {
        Path sources() {
            return ModuleRules.module(directory + "/src/main/java");
        }

        JavaClasses classes() {
            JavaClasses classes = new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages(rootPackage);
            if (classes.isEmpty()) {
                throw new AssertionError("no class of " + rootPackage + " was imported: the rules would pass vacuously");
            }
            return classes;
        }
    }

    /** @return the modules this test holds to the limits: its own, and any below it that has no test of its own */
    protected abstract List<Module> modules();

    @Test
    void noMainClassIsOverTheLineLimit() {
        ModuleRules.assertNone("main classes over " + ModuleRules.MAX_CLASS_LINES + " lines",
                each(m -> ModuleRules.classesOver(m.sources(), ModuleRules.MAX_CLASS_LINES)));
    }

    @Test
    void noPackageIsOverTheFileLimitButTheNamedOnes() {
        ModuleRules.assertNone("packages over " + ModuleRules.MAX_PACKAGE_FILES + " files",
                each(m -> ModuleRules.packagesOver(m.sources(), ModuleRules.MAX_PACKAGE_FILES, m.largePackages())));
    }

    @Test
    void packagesImportEachOtherInNoCircle() {
        ModuleRules.assertNone("import circles between packages",
                each(m -> ModuleRules.importCircles(m.sources(), m.classes(), m.apiPackage())));
    }

    @Test
    void noClassRefersToTheClassThatCreatesIt() {
        ModuleRules.assertNone("classes that refer to their creator",
                each(m -> ModuleRules.creatorReferences(m.classes())));
    }

    @Test
    void everyFuzzSeedDirectoryBelongsToAFuzzTest() {
        // The module under test only: the seeds of a module below are its own build's.
        ModuleRules.assertNone("fuzz seeds no fuzz test reads", ModuleRules.unmatchedFuzzSeeds(
                Path.of("src/test/resources"), ModuleRules.module("src/test/java")));
    }

    private List<String> each(Function<Module, List<String>> rule) {
        List<String> all = new ArrayList<>();
        for (Module m : modules()) {
            all.addAll(rule.apply(m));
        }
        return all;
    }
}
