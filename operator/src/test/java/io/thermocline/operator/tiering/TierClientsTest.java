package io.thermocline.operator.tiering;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import io.thermocline.operator.fakes.SteppedClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TierClientsTest {

    private final SteppedClock clock = new SteppedClock(Instant.parse("2026-12-01T12:00:00Z"));

    @Test
    void aPollReusesTheClientOfItsConnectionString() {
        try (TierClients clients = new TierClients(Duration.ofMinutes(10), 1, clock)) {
            MongoClient first = clients.forUri("mongodb://127.0.0.1:1/?replicaSet=a");
            clock.advance(Duration.ofSeconds(30));
            assertThat(clients.forUri("mongodb://127.0.0.1:1/?replicaSet=a")).isSameAs(first);
            assertThat(clients.size()).isEqualTo(1);
        }
    }

    @Test
    void aClientUnusedForTheIdleTimeIsClosedAndDropped() {
        try (TierClients clients = new TierClients(Duration.ofMinutes(10), 1, clock)) {
            MongoClient rotatedAway = clients.forUri("mongodb://u:old@127.0.0.1:1/");
            clock.advance(Duration.ofMinutes(11));
            clients.forUri("mongodb://u:new@127.0.0.1:1/");
            assertThat(clients.size()).isEqualTo(1);
            assertThat(clients.forUri("mongodb://u:old@127.0.0.1:1/")).isNotSameAs(rotatedAway);
        }
    }
}
