package io.thermocline.tiering;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.config.CollectionPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NamespaceTest {

    @Test
    void theFirstDotSplitsAFullNameAndTheCollectionMayHoldMoreDots() {
        Namespace ns = Namespace.parse("shop.orders.2026");
        assertThat(ns.database()).isEqualTo("shop");
        assertThat(ns.collection()).isEqualTo("orders.2026");
        assertThat(ns).hasToString("shop.orders.2026").isEqualTo(new Namespace("shop", "orders.2026"));
    }

    @Test
    void aPolicyNamesTheSameNamespaceAsItsFullName() {
        CollectionPolicy policy = new CollectionPolicy("demo", "orders", "createdAt", Duration.ofDays(30));
        assertThat(Namespace.of(policy)).isEqualTo(Namespace.parse(policy.namespace()));
    }

    @Test
    void aNameWithoutDatabaseOrCollectionIsRefusedWithTheExpectedForm() {
        for (String bad : new String[] {"orders", ".orders", "shop.", ""}) {
            assertThatThrownBy(() -> Namespace.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad);
        }
        assertThatThrownBy(() -> new Namespace("sh op", "orders")).isInstanceOf(IllegalArgumentException.class);
    }
}
