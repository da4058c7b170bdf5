package io.thermocline.operator.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.observability.ServiceMonitorDependent.SelectorLabels;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The operator's monitoring-labels setting, as the install's environment variable writes it. */
@Timeout(10)
class ServiceMonitorLabelsTest {

    @Test
    void keyValuePairsSeparatedByCommasBlankOnesSkipped() {
        assertThat(SelectorLabels.parse(Optional.of("release=kube-prometheus-stack"))
                        .labels())
                .isEqualTo(Map.of("release", "kube-prometheus-stack"));
        assertThat(SelectorLabels.parse(Optional.of(" release = monitoring , team=db,,=x,novalue"))
                        .labels())
                .isEqualTo(Map.of("release", "monitoring", "team", "db"));
        assertThat(SelectorLabels.parse(Optional.empty()).labels()).isEmpty();
        assertThat(SelectorLabels.parse(Optional.of("a=b=c")).labels()).isEqualTo(Map.of("a", "b=c"));
    }
}
