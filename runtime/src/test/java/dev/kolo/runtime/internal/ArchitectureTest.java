package dev.kolo.runtime.internal;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.codeUnits;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.kolo.testing.ModuleLimits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The runtime's package map, checked on its bytecode: the internal packages form no cycle, the data plane
 * knows nothing of the control plane, the internals never reach back to the {@code Kolo} facade, no two classes
 * of different packages use each other, and the public API's signatures show no internal type. And the limits every
 * module keeps ({@link ModuleLimits}), for the runtime and for the kernels below it (which cannot use the runtime's
 * test support): no main class above 500 lines, no package above 20 files, no import circle between packages, no
 * class that refers to its creator, no fuzz seeds that no fuzz test reads.
 */
class ArchitectureTest extends ModuleLimits {
    private static final String INTERNAL = "dev.kolo.runtime.internal";
    /** The packages of the runtime's public API. */
    private static final String[] API_PACKAGES = {"dev.kolo.runtime", "dev.kolo.runtime.train", "dev.kolo.runtime.jvm"};
    private static final JavaClasses RUNTIME = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kolo.runtime");
    /**
     * The public API package may hold more files than the limit: a user finds the API in one package (as
     * {@code io.vertx.core} and {@code com.hazelcast.core} keep theirs), and splitting it would change the names
     * programs import.
     */
    private static final String API_PACKAGE = "dev.kolo.runtime";

    @Override
    protected List<Module> modules() {
        // The kernels sit below the runtime and cannot use its test support: their limits are held here.
        // The API package may hold more than the file limit: it is what a user imports (Kolo, its config and
        // settings, Tensor, DType, ReduceOp, the exceptions), fixed by the API contract, and one import for users
        // is worth more than two rooms; what is internal lives below it.
        return List.of(new Module(".", "dev.kolo.runtime", API_PACKAGE, Set.of(API_PACKAGE)),
                new Module("../kernels", "dev.kolo.kernels", null, Set.of()));
    }

    @Test
    void internalPackagesFormNoCycle() {
        slices().matching(INTERNAL + ".(*)..").should().beFreeOfCycles().check(RUNTIME);
    }

    @Test
    void theTransportKnowsNothingAboveIt() {
        // Gloo's layering: the transport moves frames and sets up connections, and knows no collective.
        usesNone("transport", "cluster", "collectives", "control", "wiring", "engine", "negotiation", "observability", "security");
    }

    @Test
    void theTransportsFramesAndWiresDoNotKnowHowConnectionsAreMade() {
        noClasses().that().resideInAPackage(INTERNAL + ".transport")
                .should().dependOnClassesThat().resideInAPackage(INTERNAL + ".transport.connect..")
                .check(RUNTIME);
    }

    @Test
    void theFramesAndThePumpSeeSharedMemoryOnlyThroughTheWireSeam() {
        // MappedWire is the seam; rings, segments and the upgrade are transport.shm's alone.
        noClasses().that().resideInAPackage(INTERNAL + ".transport")
                .should().dependOnClassesThat().resideInAPackage(INTERNAL + ".transport.shm..")
                .check(RUNTIME);
    }

    @Test
    void theCollectivesUseOnlyTheTransport() {
        usesNone("collectives", "cluster", "control", "wiring", "engine", "negotiation", "observability", "security");
    }

    @Test
    void theCollectivesAreLayeredSeamScheduleAlgorithmGeneration() {
        // The engine and the wiring see the seam (collectives); each package below uses only those before it.
        com.tngtech.archunit.library.Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("seam").definedBy(INTERNAL + ".collectives")
                .layer("schedule").definedBy(INTERNAL + ".collectives.schedule")
                .layer("algorithm").definedBy(INTERNAL + ".collectives.algorithm")
                .layer("generation").definedBy(INTERNAL + ".collectives.generation")
                .whereLayer("generation").mayNotBeAccessedByAnyLayer()
                .whereLayer("algorithm").mayOnlyBeAccessedByLayers("generation")
                .whereLayer("schedule").mayOnlyBeAccessedByLayers("algorithm", "generation")
                .check(RUNTIME);
    }

    @Test
    void theEngineIsLayeredClientDriveAgreeExecuteOp() {
        // A tensor goes down the stages and never returns to one it left: the client submits, the drive stage
        // steps the generation, the generation agrees and hands what was agreed to the execution; the op is what
        // they all hold. A stage sees those below it through narrow interfaces, never the one above.
        com.tngtech.archunit.library.Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("client").definedBy(INTERNAL + ".engine")
                .layer("drive").definedBy(INTERNAL + ".engine.drive")
                .layer("agree").definedBy(INTERNAL + ".engine.agree")
                .layer("execute").definedBy(INTERNAL + ".engine.execute")
                .layer("op").definedBy(INTERNAL + ".engine.op")
                .whereLayer("client").mayNotBeAccessedByAnyLayer()
                .whereLayer("drive").mayOnlyBeAccessedByLayers("client")
                .whereLayer("agree").mayOnlyBeAccessedByLayers("client", "drive")
                .whereLayer("execute").mayOnlyBeAccessedByLayers("client", "drive", "agree")
                .whereLayer("op").mayOnlyBeAccessedByLayers("client", "drive", "agree", "execute")
                .check(RUNTIME);
    }

    @Test
    void theEngineSeesOnlyTheCollectivesSeam() {
        usesNone("engine", "collectives.schedule", "collectives.algorithm", "collectives.generation");
    }

    @Test
    void theEngineReachesTheWireOnlyThroughTheCollectives() {
        usesNone("engine", "transport");
    }

    @Test
    void theDataPlanesWiringDoesNotDependOnMembershipNegotiationOrTheEngine() {
        usesNone("wiring", "cluster", "engine", "negotiation");
    }

    @Test
    void theRankSideDoesNotReachIntoTheCoordinatorsPackage() {
        usesNone("engine", "negotiation", "cluster");
    }

    @Test
    void theControlWireDependsOnNoOtherInternalPackage() {
        usesNone("control", "cluster", "wiring", "engine", "negotiation", "observability", "collectives", "transport", "security");
    }

    @Test
    void observabilityIsUsedByAllAndUsesNoneOfTheMovingParts() {
        usesNone("observability", "cluster", "wiring", "engine", "negotiation", "collectives", "transport", "security");
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

    @Test
    void theJvmOptionsUseNothingElseOfTheRuntime() {
        // Read by the launcher and the build's tests, which must not pull the runtime's internals with them.
        noClasses().that().resideInAPackage("dev.kolo.runtime.jvm..")
                .should().dependOnClassesThat(resideInAPackage("dev.kolo.runtime..")
                        .and(not(resideInAPackage("dev.kolo.runtime.jvm.."))))
                .check(RUNTIME);
    }

    @Test
    void theBootstrapIsUsedByNoOtherInternalPackage() {
        // It wires the others; one that used it would depend on everything it wires.
        noClasses().that().resideInAPackage(INTERNAL + "..").and().resideOutsideOfPackage(INTERNAL + ".bootstrap..")
                .should().dependOnClassesThat().resideInAPackage(INTERNAL + ".bootstrap..")
                .check(RUNTIME);
    }

    @Test
    void theModuleAccessDependsOnNoOtherInternalPackage() {
        // Kolo's other modules see this package: it must not hand them the rest of the internals.
        noClasses().that().resideInAPackage(INTERNAL + ".access..")
                .should().dependOnClassesThat(resideInAPackage(INTERNAL + "..")
                        .and(not(resideInAPackage(INTERNAL + ".access.."))))
                .check(RUNTIME);
    }

    @Test
    void theSignaturesOfThePublicApiShowNoInternalType() {
        codeUnits().that().arePublic().and().areDeclaredInClassesThat().arePublic()
                .and().areDeclaredInClassesThat().resideInAnyPackage(API_PACKAGES)
                .should(new ArchCondition<JavaCodeUnit>("take and return no internal type") {
                    @Override
                    public void check(JavaCodeUnit unit, ConditionEvents events) {
                        List<JavaClass> types = new ArrayList<>(unit.getRawParameterTypes());
                        types.add(unit.getRawReturnType());
                        for (JavaClass t : types) {
                            if (isInternal(t)) {
                                events.add(SimpleConditionEvent.violated(unit, unit.getFullName() + " shows " + t.getName()));
                            }
                        }
                    }
                })
                .check(RUNTIME);
        fields().that().arePublic().and().areDeclaredInClassesThat().arePublic()
                .and().areDeclaredInClassesThat().resideInAnyPackage(API_PACKAGES)
                .should(new ArchCondition<JavaField>("have no internal type") {
                    @Override
                    public void check(JavaField field, ConditionEvents events) {
                        if (isInternal(field.getRawType())) {
                            events.add(SimpleConditionEvent.violated(field, field.getFullName() + " shows "
                                    + field.getRawType().getName()));
                        }
                    }
                })
                .check(RUNTIME);
    }

    @Test
    void noTwoClassesOfDifferentPackagesUseEachOther() {
        // A file-level circle (A imports B, B imports A) ties two packages together however the slices are cut.
        Map<JavaClass, Set<JavaClass>> uses = new HashMap<>();
        for (JavaClass c : RUNTIME) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass from = topLevel(d.getOriginClass());
                JavaClass to = topLevel(d.getTargetClass());
                if (!from.getPackageName().equals(to.getPackageName())) {
                    uses.computeIfAbsent(from, k -> new HashSet<>()).add(to);
                }
            }
        }
        List<String> circles = new ArrayList<>();
        uses.forEach((a, targets) -> targets.stream()
                .filter(b -> a.getName().compareTo(b.getName()) < 0 && uses.getOrDefault(b, Set.of()).contains(a))
                .forEach(b -> circles.add(a.getName() + " <-> " + b.getName())));
        if (!circles.isEmpty()) {
            throw new AssertionError("classes of different packages that use each other: " + circles);
        }
    }

    private static boolean isInternal(JavaClass type) {
        JavaClass t = type.isArray() ? type.getBaseComponentType() : type;
        return t.getPackageName().startsWith(INTERNAL);
    }

    private static JavaClass topLevel(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** Classes of internal package {@code from} (and below) use none of the internal packages {@code forbidden}. */
    private static void usesNone(String from, String... forbidden) {
        String[] packages = new String[forbidden.length];
        for (int i = 0; i < forbidden.length; i++) {
            packages[i] = INTERNAL + "." + forbidden[i] + "..";
        }
        noClasses().that().resideInAPackage(INTERNAL + "." + from + "..")
                .should().dependOnClassesThat().resideInAnyPackage(packages)
                .check(RUNTIME);
    }
}
