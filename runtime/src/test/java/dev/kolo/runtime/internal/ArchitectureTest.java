package dev.kolo.runtime.internal;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The runtime's package map, checked on its bytecode: the internal packages form no cycle, the data plane
 * knows nothing of the control plane, and the internals never reach back to the {@code Kolo} facade.
 */
class ArchitectureTest {
    private static final String INTERNAL = "dev.kolo.runtime.internal";
    private static final JavaClasses RUNTIME = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kolo.runtime");

    @Test
    void internalPackagesFormNoCycle() {
        slices().matching(INTERNAL + ".(*)..").should().beFreeOfCycles().check(RUNTIME);
    }

    @Test
    void theRingDependsOnNoOtherInternalPackage() {
        noClasses().that().resideInAPackage(INTERNAL + ".ring..")
                .should().dependOnClassesThat().resideInAnyPackage(INTERNAL + ".cluster..", INTERNAL + ".control..",
                        INTERNAL + ".dataplane..", INTERNAL + ".engine..", INTERNAL + ".negotiation..",
                        INTERNAL + ".observability..", INTERNAL + ".security..")
                .check(RUNTIME);
    }

    @Test
    void theDataPlaneBridgeDoesNotDependOnMembershipNegotiationOrTheEngine() {
        noClasses().that().resideInAPackage(INTERNAL + ".dataplane..")
                .should().dependOnClassesThat().resideInAnyPackage(INTERNAL + ".cluster..", INTERNAL + ".engine..",
                        INTERNAL + ".negotiation..")
                .check(RUNTIME);
    }

    @Test
    void theRankSideDoesNotReachIntoTheCoordinatorsPackage() {
        noClasses().that().resideInAPackage(INTERNAL + ".engine..")
                .should().dependOnClassesThat().resideInAnyPackage(INTERNAL + ".negotiation..", INTERNAL + ".cluster..")
                .check(RUNTIME);
    }

    @Test
    void theControlWireDependsOnNoOtherInternalPackage() {
        noClasses().that().resideInAPackage(INTERNAL + ".control..")
                .should().dependOnClassesThat().resideInAnyPackage(INTERNAL + ".cluster..", INTERNAL + ".dataplane..",
                        INTERNAL + ".engine..", INTERNAL + ".negotiation..", INTERNAL + ".observability..",
                        INTERNAL + ".ring..", INTERNAL + ".security..")
                .check(RUNTIME);
    }

    @Test
    void observabilityIsUsedByAllAndUsesNoneOfTheMovingParts() {
        noClasses().that().resideInAPackage(INTERNAL + ".observability..")
                .should().dependOnClassesThat().resideInAnyPackage(INTERNAL + ".cluster..", INTERNAL + ".dataplane..",
                        INTERNAL + ".engine..", INTERNAL + ".negotiation..", INTERNAL + ".ring..",
                        INTERNAL + ".security..")
                .check(RUNTIME);
    }

    @Test
    void theInternalsNeverUseTheKoloFacade() {
        noClasses().that().resideInAPackage(INTERNAL + "..")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.kolo.runtime.Kolo")
                .check(RUNTIME);
    }

    @Test
    void theTrainingApiUsesOnlyThePublicApi() {
        noClasses().that().resideInAPackage("dev.kolo.runtime.train..")
                .should().dependOnClassesThat().resideInAPackage(INTERNAL + "..")
                .check(RUNTIME);
    }
}
