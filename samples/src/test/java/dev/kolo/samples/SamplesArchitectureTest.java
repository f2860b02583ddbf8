package dev.kolo.samples;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.kolo.testing.ModuleLimits;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries, checked on the bytecode of every module (samples depends on all of them): each
 * module's {@code internal} packages are its own (the runtime opens {@code internal.access} to checkpoint and
 * elastic only), and the samples' packages form no cycle; and the samples held to the limits every module keeps
 * ({@link ModuleLimits}).
 */
class SamplesArchitectureTest extends ModuleLimits {
    private static final JavaClasses KOLO = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kolo");

    @Override
    protected List<Module> modules() {
        return List.of(new Module(".", "dev.kolo.samples", null, Set.of()));
    }

    @Test
    void onlyTheRuntimeUsesItsInternals() {
        // internal.access is the one internal package the runtime opens, to Kolo's own modules (rule below).
        noClasses().that().resideOutsideOfPackage("dev.kolo.runtime..")
                .should().dependOnClassesThat(com.tngtech.archunit.core.domain.JavaClass.Predicates
                        .resideInAPackage("dev.kolo.runtime.internal..")
                        .and(com.tngtech.archunit.base.DescribedPredicate.not(com.tngtech.archunit.core.domain
                                .JavaClass.Predicates.resideInAPackage("dev.kolo.runtime.internal.access.."))))
                .check(KOLO);
    }

    @Test
    void onlyTheCheckpointModuleUsesItsInternals() {
        noClasses().that().resideOutsideOfPackage("dev.kolo.checkpoint..")
                .should().dependOnClassesThat().resideInAPackage("dev.kolo.checkpoint.internal..")
                .check(KOLO);
    }

    @Test
    void onlyTheElasticModuleUsesItsInternals() {
        noClasses().that().resideOutsideOfPackage("dev.kolo.elastic..")
                .should().dependOnClassesThat().resideInAPackage("dev.kolo.elastic.internal..")
                .check(KOLO);
    }

    @Test
    void onlyKolosOwnModulesUseTheRuntimesModuleAccess() {
        noClasses().that().resideOutsideOfPackages("dev.kolo.runtime..", "dev.kolo.checkpoint..", "dev.kolo.elastic..")
                .should().dependOnClassesThat().resideInAPackage("dev.kolo.runtime.internal.access..")
                .check(KOLO);
    }

    @Test
    void thePublicApisShowNoHazelcastType() {
        // A user's code sees Kolo's types only: the cluster member stays behind the runtime's internal.access.
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods().that().arePublic()
                .and().areDeclaredInClassesThat().arePublic()
                .and().areDeclaredInClassesThat().resideInAnyPackage("dev.kolo.runtime", "dev.kolo.runtime.train",
                        "dev.kolo.checkpoint", "dev.kolo.elastic")
                .should(new com.tngtech.archunit.lang.ArchCondition<com.tngtech.archunit.core.domain.JavaMethod>(
                        "not take or return a Hazelcast type") {
                    @Override
                    public void check(com.tngtech.archunit.core.domain.JavaMethod m,
                                      com.tngtech.archunit.lang.ConditionEvents events) {
                        java.util.List<com.tngtech.archunit.core.domain.JavaClass> types =
                                new java.util.ArrayList<>(m.getRawParameterTypes());
                        types.add(m.getRawReturnType());
                        for (com.tngtech.archunit.core.domain.JavaClass t : types) {
                            if (t.getPackageName().startsWith("com.hazelcast")) {
                                events.add(com.tngtech.archunit.lang.SimpleConditionEvent.violated(m,
                                        m.getFullName() + " shows " + t.getName()));
                            }
                        }
                    }
                })
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
