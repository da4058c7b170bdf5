package io.thermocline.operator.archive;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.api.v1alpha1.FastTierSpec;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class VersionPolicyTest {

    @ParameterizedTest(name = "pinned={0} archive={1} -> {2} {3} {4}")
    @CsvSource(nullValues = "null", value = {
            "auto,   7.0.14,       true,  7.0.14, MatchesArchive",
            "auto,   8.0.3-rc1,    true,  8.0.3,  MatchesArchive",
            "7.0.12, 7.0.14,       true,  7.0.12, Pinned",
            "7.0.14, 7.0.14,       true,  7.0.14, Pinned",
            "6.0.5,  7.0.14,       false, null,   Mismatch",
            "8.0.0,  7.0.14,       false, null,   Mismatch",
            "auto,   4.2.24,       false, null,   ArchiveTooOld",
            "auto,   4.4.0,        true,  4.4.0,  MatchesArchive",
            "auto,   weird,        false, null,   UnknownArchiveVersion",
    })
    void fastTierVersionFollowsTheArchiveUnlessPinned(String pinned, String archive, boolean compatible, String fast, String reason) {
        FastTierSpec spec = new FastTierSpec();
        spec.version = pinned;
        VersionDecision decision = VersionPolicy.decide(spec, archive);
        assertThat(decision.compatible()).isEqualTo(compatible);
        assertThat(decision.fastTierVersion()).isEqualTo(fast);
        assertThat(decision.reason()).isEqualTo(reason);
        assertThat(decision.message()).isNotBlank();
    }

    @ParameterizedTest(name = "pinned={0} archive={1} running={2} fcv={3} -> {4} {5} {6}")
    @CsvSource(nullValues = "null", value = {
            "auto,   8.0.4,  7.0.14, 7.0,  true,  8.0.4,  MatchesArchive",
            "auto,   7.0.15, 7.0.14, 7.0,  true,  7.0.15, MatchesArchive",
            "auto,   7.0.2,  7.0.14, 7.0,  true,  7.0.2,  MatchesArchive",
            "auto,   5.0.30, 4.4.29, 4.4,  true,  5.0.30, MatchesArchive",
            "auto,   8.2.1,  8.0.4,  8.0,  true,  8.2.1,  MatchesArchive",
            "auto,   8.0.4,  6.0.19, 6.0,  false, 6.0.19, SkippedMajorVersion",
            "auto,   8.0.4,  7.0.14, 6.0,  false, 7.0.14, SkippedMajorVersion",
            "auto,   6.0.19, 7.0.14, 7.0,  false, 7.0.14, DowngradeRefused",
            "auto,   7.0.14, 8.0.4,  7.0,  true,  7.0.14, MatchesArchive",
            "auto,   7.0.14, 8.0.4,  8.0,  false, 8.0.4,  DowngradeRefused",
            "auto,   7.0.14, 8.0.4,  null, false, 8.0.4,  DowngradeRefused",
            "auto,   9.0.1,  8.0.4,  7.0,  false, 8.0.4,  SkippedMajorVersion",
            "7.0.14, 8.0.4,  6.0.19, 6.0,  true,  7.0.14, Pinned",
            "7.0.14, 8.0.4,  null,   null, false, null,   Mismatch",
            "6.0.5,  8.0.4,  7.0.14, 7.0,  false, 7.0.14, Mismatch",
            "auto,   weird,  7.0.14, 7.0,  false, 7.0.14, UnknownArchiveVersion",
    })
    void aRunningFastTierUpgradesOneSeriesAtATimeAndNeverDowngrades(String pinned, String archive, String running, String fcv,
            boolean compatible, String fast, String reason) {
        FastTierSpec spec = new FastTierSpec();
        spec.version = pinned;
        VersionDecision decision = VersionPolicy.decide(spec, archive, running, fcv);
        assertThat(decision.reason()).isEqualTo(reason);
        assertThat(decision.compatible()).isEqualTo(compatible);
        assertThat(decision.fastTierVersion()).as("a refused change keeps what runs").isEqualTo(fast);
        assertThat(decision.message()).isNotBlank();
        if (!compatible && running != null) {
            assertThat(decision.message()).as("says what to do").containsAnyOf("pin", "upgrade", "fix");
        }
    }

    /** Raising the FCV is the user's call (the field); the operator never lowers it and never asks for more than the binary. */
    @ParameterizedTest(name = "fcv field {0}, binary {1}, running {2} at {3} -> {4}")
    @CsvSource(nullValues = "null", value = {
            "null, 8.0.4,  7.0.14, 7.0, MatchesArchive",
            "8.0,  8.0.4,  7.0.14, 7.0, MatchesArchive",
            "auto, 8.0.4,  7.0.14, 7.0, MatchesArchive",
            "8.0,  7.0.14, 7.0.14, 7.0, FeatureCompatibilityVersionAboveBinary",
            "6.0,  7.0.14, 7.0.14, 7.0, FeatureCompatibilityVersionLowering",
    })
    void theFeatureCompatibilityVersionIsRaisedOnlyAsFarAsTheSpecSays(String field, String archive, String running, String fcv,
            String reason) {
        FastTierSpec spec = new FastTierSpec();
        spec.featureCompatibilityVersion = field;
        VersionDecision decision = VersionPolicy.decide(spec, archive, running, fcv);
        assertThat(decision.reason()).isEqualTo(reason);
        assertThat(decision.compatible()).isEqualTo(reason.equals("MatchesArchive"));
        if (!decision.compatible()) {
            assertThat(decision.message()).contains("spec.fastTier.featureCompatibilityVersion").contains("fix");
        }
    }

    @org.junit.jupiter.api.Test
    void theWantedFcvFollowsTheField() {
        FastTierSpec spec = new FastTierSpec();
        assertThat(VersionPolicy.wantedFeatureCompatibilityVersion(spec, "8.0.4")).as("unset: left where it is").isNull();
        spec.featureCompatibilityVersion = "auto";
        assertThat(VersionPolicy.wantedFeatureCompatibilityVersion(spec, "8.0.4")).isEqualTo("8.0");
        spec.featureCompatibilityVersion = "7.0";
        assertThat(VersionPolicy.wantedFeatureCompatibilityVersion(spec, "8.0.4")).isEqualTo("7.0");
    }
}
