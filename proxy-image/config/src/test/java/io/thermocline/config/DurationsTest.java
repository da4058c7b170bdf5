package io.thermocline.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DurationsTest {

    @ParameterizedTest(name = "{0} is {1} ms")
    @CsvSource({"30d, 2592000000", "12h, 43200000", "90m, 5400000", "5s, 5000", "100ms, 100", "2w, 1209600000", "PT1.5S, 1500"})
    void parsesShortAndIsoForms(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "{0} ms formats as {1}")
    @CsvSource({"2592000000, 30d", "5400000, 90m", "1500, 1500ms", "0, 0s", "604800000, 1w"})
    void formatsShortestExactForm(long millis, String text) {
        assertThat(Durations.format(Duration.ofMillis(millis))).isEqualTo(text);
    }

    @ParameterizedTest
    @CsvSource({"thirty days", "30x", "-5s"})
    void rejectsWhatIsNotADuration(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).hasMessageContaining("not a duration");
    }
}
