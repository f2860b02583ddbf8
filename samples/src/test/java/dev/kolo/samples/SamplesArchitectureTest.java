package dev.kolo.samples;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries, checked on the bytecode of every module (samples depends on all of them): each
 * module's {@code internal} packages are its own, and the samples' packages form no cycle.
 */
class SamplesArchitectureTest {
    private static final JavaClasses KOLO = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kolo");

    @Test
    void onlyTheRuntimeUsesItsInternals() {
        noClasses().that().resideOutsideOfPackage("dev.kolo.runtime..")
                .should().dependOnClassesThat().resideInAPackage("dev.kolo.runtime.internal..")
                .check(KOLO);
    }

    @Test
    void onlyTheCheckpointModuleUsesItsInternals() {
        noClasses().that().resideOutsideOfPackage("dev.kolo.checkpoint..")
                .should().dependOnClassesThat().resideInAPackage("dev.kolo.checkpoint.internal..")
                .check(KOLO);
    }

    @Test
    void samplesPackagesFormNoCycle() {
        slices().matching("dev.kolo.samples.(*)..").should().beFreeOfCycles().check(KOLO);
    }

    @Test
    void theLaunchPackageIsBelowEveryOtherSamplesPackage() {
        noClasses().that().resideInAPackage("dev.kolo.samples.launch..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.kolo.samples.cli..",
                        "dev.kolo.samples.bench..", "dev.kolo.samples.chaos..", "dev.kolo.samples.soak..",
                        "dev.kolo.samples.mnist..")
                .check(KOLO);
    }

    @Test
    void everyModuleIsImported() {
        for (String pkg : new String[] {"dev.kolo.kernels", "dev.kolo.runtime", "dev.kolo.checkpoint",
                "dev.kolo.elastic", "dev.kolo.samples.cli"}) {
            if (KOLO.stream().noneMatch(c -> c.getPackageName().equals(pkg))) {
                throw new AssertionError("no class of " + pkg + " was imported: the rules above would pass vacuously");
            }
        }
    }
}
