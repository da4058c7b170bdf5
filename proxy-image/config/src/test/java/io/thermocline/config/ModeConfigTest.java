package io.thermocline.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ModeConfigTest {

    private static final String TIERED = """
            tiers:
              fast: {uri: "mongodb://fast-0:27017/?replicaSet=fast"}
              archive: {uri: "mongodb://a:27017/?replicaSet=rs0"}
            collections:
              - {database: shop, collection: orders, ageField: createdAt, hotWindow: 30d}
            """;

    @Test
    void modeDefaultsToTieredWithDefaultShadowSampling() {
        ThermoclineConfig c = ConfigLoader.parse(TIERED, Map.of());
        assertThat(c.mode()).isEqualTo(Mode.TIERED);
        assertThat(c.shadow().cutoverQuietPeriod()).isEqualTo(Duration.ofHours(1));
        assertThat(c.shadow().minComparisons()).isEqualTo(1000);
    }

    @Test
    void shadowModeAndItsSectionParseFromFileAndEnvironment() {
        ThermoclineConfig c = ConfigLoader.parse(
                TIERED + "mode: shadow\nshadow: {sampleRate: 0.5, cutoverQuietPeriod: 10m}\n",
                Map.of("THERMOCLINE_SHADOW_MIN_COMPARISONS", "20"));
        assertThat(c.mode()).isEqualTo(Mode.SHADOW);
        assertThat(c.shadow().sampleRate()).isEqualTo(0.5);
        assertThat(c.shadow().cutoverQuietPeriod()).isEqualTo(Duration.ofMinutes(10));
        assertThat(c.shadow().minComparisons()).isEqualTo(20);
        assertThat(ConfigLoader.parse(TIERED, Map.of("THERMOCLINE_MODE", "draining"))
                        .mode())
                .isEqualTo(Mode.DRAINING);
    }

    @Test
    void badModeAndSamplingNameTheFieldAndTheFix() {
        assertThatThrownBy(() -> ConfigLoader.parse(TIERED + "mode: shade\n", Map.of()))
                .hasMessageContaining("mode")
                .hasMessageContaining("use shadow");
        assertThatThrownBy(() -> ConfigLoader.parse(TIERED + "shadow: {sampleRate: 2}\n", Map.of()))
                .hasMessageContaining("shadow.sampleRate");
        assertThatThrownBy(() -> ConfigLoader.parse("tiers: {archive: {uri: 'mongodb://a'}}\nmode: shadow\n", Map.of()))
                .hasMessageContaining("mode: shadow needs a fast tier");
    }

    @Test
    void writtenConfigReadsBackWithItsMode() {
        ThermoclineConfig c = ConfigLoader.parse(TIERED + "mode: draining\n", Map.of());
        assertThat(ConfigLoader.parse(ConfigWriter.toYaml(c), Map.of()).mode()).isEqualTo(Mode.DRAINING);
    }
}
