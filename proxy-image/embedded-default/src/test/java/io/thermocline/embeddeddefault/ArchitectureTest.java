package io.thermocline.embeddeddefault;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/** The layering docs/architecture.md states for the `embedded-default` module, checked on its production classes. */
class ArchitectureTest {

    /** This module's production classes (their directory: no scan of the test classpath for the package). */
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .importUrl(EmbeddedStack.class.getProtectionDomain().getCodeSource().getLocation());

    @Test
    void packagesFormNoCycle() {
        slices().matching("io.thermocline.(**)").should().beFreeOfCycles().check(CLASSES);
    }

    /** The demo adds the embedded replica sets to everything the production jar runs. */
    @Test
    void dependsOnlyOnTheModulesTheArchitectureNames() {
        noClasses()
                .should()
                .dependOnClassesThat(resideInAPackage("io.thermocline..")
                        .and(not(resideInAnyPackage(
                                "io.thermocline.embeddeddefault..",
                                "io.thermocline.app..",
                                "io.thermocline.embedded..",
                                "io.thermocline.proxy..",
                                "io.thermocline.tiering..",
                                "io.thermocline.config.."))))
                .check(CLASSES);
    }
}
