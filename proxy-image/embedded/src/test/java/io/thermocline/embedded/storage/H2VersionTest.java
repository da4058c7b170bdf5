package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.h2.engine.Constants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The on-disk engine runs on H2 2.4.240 or newer, not the 2.3.232 mongo-java-server 1.47 depends on: 2.3.232 refused
 * to reopen a 1.3 GB store the embedded set had closed cleanly ("Chunk 28190 not found" while reading its document
 * map), and 2.4.240 read every one of its 311,080 documents (docs/embedded-replica-set.md, "The H2 version"). A
 * dependency update that brings the older H2 back fails here rather than on a user's restart.
 */
@Timeout(10)
class H2VersionTest {

    @Test
    void theStoreEngineIsAnH2ThatReopensWhatItWrote() {
        int version = Constants.VERSION_MAJOR * 1_000_000 + Constants.VERSION_MINOR * 1_000 + Constants.BUILD_ID;
        assertThat(version)
                .as("H2 %d.%d.%d on the classpath", Constants.VERSION_MAJOR, Constants.VERSION_MINOR, Constants.BUILD_ID)
                .isGreaterThanOrEqualTo(2_004_240);
    }
}
