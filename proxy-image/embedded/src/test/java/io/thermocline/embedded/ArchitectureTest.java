package io.thermocline.embedded;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/** The layering docs/architecture.md states for the `embedded` module, checked on its production classes. */
class ArchitectureTest {

    /** This module's production classes (their directory: no scan of the test classpath for the package). */
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .importUrl(EmbeddedReplicaSet.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation());

    @Test
    void packagesFormNoCycle() {
        slices().matching("io.thermocline.(**)").should().beFreeOfCycles().check(CLASSES);
    }

    /** The embedded replica set speaks through the wire codec and shares the security module's users and SCRAM; it knows nothing of the proxy or the tiering (it is their test substrate). */
    @Test
    void dependsOnlyOnTheModulesTheArchitectureNames() {
        noClasses()
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline..")
                        .and(not(resideInAnyPackage(
                                "io.thermocline.embedded..", "io.thermocline.wire..", "io.thermocline.security.."))))
                .check(CLASSES);
    }
}
