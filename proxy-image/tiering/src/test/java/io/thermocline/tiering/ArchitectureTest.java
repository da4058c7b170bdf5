package io.thermocline.tiering;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/** The layering docs/architecture.md states for the `tiering` module, checked on its production classes. */
class ArchitectureTest {

    /** This module's production classes (their directory: no scan of the test classpath for the package). */
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .importUrl(Namespace.class.getProtectionDomain().getCodeSource().getLocation());

    @Test
    void packagesFormNoCycle() {
        slices().matching("io.thermocline.(**)").should().beFreeOfCycles().check(CLASSES);
    }

    /** The workers know the drivers, the config and the security module's TLS material; never the proxy. */
    @Test
    void dependsOnlyOnTheModulesTheArchitectureNames() {
        noClasses()
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline..")
                        .and(not(resideInAnyPackage(
                                "io.thermocline.tiering..", "io.thermocline.config..", "io.thermocline.security.."))))
                .check(CLASSES);
    }

    /** The shared tiering state is values and the decisions over them, which the proxy's routing proofs read: no I/O. */
    @Test
    void stateIsValuesWithoutIo() {
        classes()
                .that()
                .resideInAPackage("io.thermocline.tiering.state..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("java..", "org.bson..", "io.thermocline.config..", "io.thermocline.tiering.state..")
                .check(CLASSES);
    }
}
