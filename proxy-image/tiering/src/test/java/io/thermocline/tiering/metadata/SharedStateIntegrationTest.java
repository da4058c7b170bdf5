package io.thermocline.tiering.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class SharedStateIntegrationTest extends OnTwoTiers {

    static final Instant T = Instant.parse("2026-03-01T00:00:00Z");

    @Test
    void aWriteBasedOnAStaleVersionIsRefused() {
        MetadataStore store = tiers.store;
        NamespaceState initial = store.namespace(TwoTiers.NS);
        store.saveNamespace(initial, initial.withCoverage(T));
        assertThatThrownBy(() -> store.saveNamespace(initial, initial.withCoverage(T.minusSeconds(60))))
                .isInstanceOf(StaleStateException.class);
        NamespaceState current = store.namespace(TwoTiers.NS);
        assertThat(current.oldestCovered())
                .as("the refused write changed nothing")
                .isEqualTo(T);
        store.saveNamespace(current, current.withCoverage(T.plusSeconds(1)));
        assertThat(store.namespace(TwoTiers.NS).oldestCovered()).isEqualTo(T.plusSeconds(1));
    }

    @Test
    void concurrentUpdatesAreAllApplied() throws Exception {
        Thread[] threads = new Thread[4];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(() -> {
                for (int n = 0; n < 5; n++) {
                    tiers.store.updateNamespace(
                            TwoTiers.NS,
                            s -> s.withLastEviction(new EvictorPass(
                                    T,
                                    T,
                                    (s.lastEviction() == null
                                                    ? 0
                                                    : s.lastEviction().evicted())
                                            + 1,
                                    0,
                                    0)));
                }
            });
            threads[i].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(tiers.store.namespace(TwoTiers.NS).lastEviction().evicted()).isEqualTo(20);
    }

    @Test
    void followersSeeChangesWithinTheirInterval() {
        AtomicInteger notified = new AtomicInteger();
        try (StateFollower follower = new StateFollower(tiers.store, Duration.ofMillis(50))) {
            follower.onChange(snapshot -> notified.incrementAndGet());
            tiers.store.updateNamespace(TwoTiers.NS, s -> s.withCoverage(T));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> follower.current().namespace(TwoTiers.NS).covers(T));
            assertThat(follower.current().tieringState().coverage(TwoTiers.NS).covers(T))
                    .isTrue();
            assertThat(notified.get()).isPositive();
        }
    }
}
