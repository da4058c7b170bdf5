package io.thermocline.operator;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.library.dependencies.SliceRule;
import io.thermocline.operator.reconcile.ThermoclineClusterReconciler;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The operator's layering (docs/architecture.md, "Checks"), checked on its production classes. */
class ArchitectureTest {

    /** This module's production classes (their directory: no scan of the test classpath for the package). */
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .importUrl(ThermoclineClusterReconciler.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation());

    /** A dependency that closes a known package cycle: allowed, with the reason, until the cycle is broken. */
    private record Frozen(DescribedPredicate<JavaClass> origin, DescribedPredicate<JavaClass> target, String reason) {}

    /**
     * None now. Issue 45 untangled 9 of the 14 packages (archive, credentials, dataplane, fasttier, fasttier.tls, proxy,
     * status, tiering, workflow): the TLS step moved up beside the reconciler, FastTierUser into credentials, and the
     * content hash every part writes from dataplane into layout.
     */
    private static final List<Frozen> FROZEN = List.of();

    @Test
    void packagesFormNoCycleButTheFrozenOnes() {
        SliceRule rule = slices().matching("io.thermocline.(**)").should().beFreeOfCycles();
        for (Frozen frozen : FROZEN) {
            rule = rule.ignoreDependency(frozen.origin(), frozen.target());
        }
        rule.check(CLASSES);
    }

    /** A ratchet: once a cycle is broken its entry goes, so the dependency cannot come back unnoticed. */
    @Test
    void everyFrozenDependencyStillExists() {
        for (Frozen frozen : FROZEN) {
            assertThat(CLASSES.stream()
                            .filter(frozen.origin())
                            .flatMap(c -> c.getDirectDependenciesFromSelf().stream())
                            .anyMatch(d -> frozen.target().test(d.getTargetClass())))
                    .as("the cycle is broken, remove its entry from FROZEN: %s", frozen.reason())
                    .isTrue();
        }
    }

    /** Of the data plane the operator knows only the config schema it renders (Quarkus brings its own Netty). */
    @Test
    void dependsOnlyOnTheConfigSchema() {
        noClasses()
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline..")
                        .and(not(resideInAnyPackage("io.thermocline.operator..", "io.thermocline.config.."))))
                .check(CLASSES);
    }

    /** The custom resource's model, from which the CRDs in crds/ are generated, knows nothing of how it is reconciled. */
    @Test
    void theResourceModelKnowsNothingOfTheReconciler() {
        noClasses()
                .that()
                .resideInAPackage("io.thermocline.operator.api..")
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline.operator..")
                        .and(not(resideInAPackage("io.thermocline.operator.api.."))))
                .check(CLASSES);
    }

    /** The names of the cluster's objects (and the hash written into them) are below every part of the operator. */
    @Test
    void theLayoutKnowsOnlyTheResourceModel() {
        noClasses()
                .that()
                .resideInAPackage("io.thermocline.operator.layout..")
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline.operator..")
                        .and(not(resideInAnyPackage(
                                "io.thermocline.operator.layout..", "io.thermocline.operator.api.."))))
                .check(CLASSES);
    }

    /**
     * The fast tier's TLS types (certificates, trust, the rollout's modes) are used by every part that talks to the fast
     * tier or renders its pods; the step that acts on them, which needs those parts, is the reconciler's.
     */
    @Test
    void theFastTiersTlsTypesKnowOnlyTheLayoutAndTheResourceModel() {
        noClasses()
                .that()
                .resideInAPackage("io.thermocline.operator.fasttier.tls..")
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline.operator..")
                        .and(not(resideInAnyPackage(
                                "io.thermocline.operator.fasttier.tls..",
                                "io.thermocline.operator.layout..",
                                "io.thermocline.operator.api.."))))
                .check(CLASSES);
    }
}
