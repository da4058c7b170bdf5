package io.thermocline.security;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/** The layering docs/architecture.md states for the `security` module, checked on its production classes. */
class ArchitectureTest {

    /** This module's production classes (their directory: no scan of the test classpath for the package). */
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .importUrl(UserName.class.getProtectionDomain().getCodeSource().getLocation());

    @Test
    void packagesFormNoCycle() {
        slices().matching("io.thermocline.(**)").should().beFreeOfCycles().check(CLASSES);
    }

    /** Users, roles, SCRAM and TLS material depend on nothing of ours: the proxy, the workers and the embedded replica set share them. */
    @Test
    void dependsOnlyOnTheModulesTheArchitectureNames() {
        noClasses()
                .should()
                .dependOnClassesThat(
                        resideInAPackage("io.thermocline..").and(not(resideInAnyPackage("io.thermocline.security.."))))
                .check(CLASSES);
    }
}
