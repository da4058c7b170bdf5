package io.thermocline.proxy.session;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class TransactionPinsTest {
    private static final ServerAddress MEMBER = new ServerAddress("p", 1);
    private final AtomicLong nanos = new AtomicLong();
    private final TransactionPins pins = new TransactionPins(2, Duration.ofMinutes(30), nanos::get);

    @Test
    void aPinServesItsOwnTransactionNumberOnly() {
        SessionKey session = new SessionKey(new BsonInt32(1));
        pins.pin(session, 5, Tier.ARCHIVE, MEMBER);
        assertThat(pins.find(session, 5)).map(TransactionPins.Pin::member).contains(MEMBER);
        assertThat(pins.find(session, 6)).isEmpty();
        pins.release(session);
        assertThat(pins.find(session, 5)).isEmpty();
    }

    @Test
    void aPinNobodyUsesForTheSessionTimeoutIsForgotten() {
        SessionKey used = new SessionKey(new BsonInt32(1));
        SessionKey abandoned = new SessionKey(new BsonInt32(2));
        pins.pin(used, 1, Tier.ARCHIVE, MEMBER);
        pins.pin(abandoned, 1, Tier.ARCHIVE, MEMBER);
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(pins.find(used, 1)).isPresent();
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(pins.find(abandoned, 1)).isEmpty();
        assertThat(pins.find(used, 1)).as("used 20 minutes ago").isPresent();
        assertThat(pins.size()).isEqualTo(1);
    }

    @Test
    void pinsAreBounded() {
        for (int i = 0; i < 50; i++) {
            pins.pin(new SessionKey(new BsonInt32(i)), 1, Tier.FAST, MEMBER);
        }
        assertThat(pins.size()).isLessThanOrEqualTo(2);
    }
}
