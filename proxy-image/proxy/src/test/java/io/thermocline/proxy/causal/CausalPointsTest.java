package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.session.SessionKey;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class CausalPointsTest {

    private static final Optional<SessionKey> SESSION = Optional.of(new SessionKey(new BsonInt32(1)));
    private final AtomicLong nanos = new AtomicLong();
    private final CausalPoints points = new CausalPoints(4, SessionKey.TIMEOUT, nanos::get);

    @Test
    void aReadTakesTheLaterOfTheSessionAndTheConnectionPoint() {
        points.observed(SESSION, 10, new BsonTimestamp(5, 1));
        points.observed(Optional.empty(), 11, new BsonTimestamp(9, 1));
        assertThat(points.point(SESSION, 11)).isEqualTo(new BsonTimestamp(9, 1));
        assertThat(points.point(SESSION, 12)).isEqualTo(new BsonTimestamp(5, 1));
        points.observed(SESSION, 10, new BsonTimestamp(3, 1));
        assertThat(points.point(SESSION, 10)).as("a point never moves back").isEqualTo(new BsonTimestamp(5, 1));
    }

    @Test
    void aPointNoOperationUsedForTheSessionTimeoutIsForgottenAndAUsedOneKept() {
        Optional<SessionKey> abandoned = Optional.of(new SessionKey(new BsonInt32(2)));
        points.observed(SESSION, 10, new BsonTimestamp(5, 1));
        points.observed(abandoned, 20, new BsonTimestamp(6, 1));
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(points.point(SESSION, 10)).isEqualTo(new BsonTimestamp(5, 1));
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(points.point(abandoned, 20)).as("idle 40 minutes").isNull();
        assertThat(points.point(SESSION, 10)).as("used 20 minutes ago").isEqualTo(new BsonTimestamp(5, 1));
    }

    @Test
    void pointsAreBounded() {
        for (int connection = 0; connection < 50; connection++) {
            points.observed(Optional.empty(), connection, new BsonTimestamp(connection + 1, 1));
        }
        assertThat(points.point(Optional.empty(), 0)).as("least recently used").isNull();
        assertThat(points.point(Optional.empty(), 49)).isEqualTo(new BsonTimestamp(50, 1));
    }
}
