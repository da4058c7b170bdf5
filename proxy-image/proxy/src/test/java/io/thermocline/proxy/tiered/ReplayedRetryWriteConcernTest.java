package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.config.ReadConsistency;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.tiered.RetryAcrossReplicasTest.Raw;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A retryable write the proxy ran itself (a guarded {@code $inc} of a cold document), whose commit a majority of the
 * fast tier has not applied (its secondaries paused from just before the transaction), retried with the same
 * {@code lsid} and {@code txnNumber}: the retry is answered from the proxy's record, and as mongod answers a retry from
 * its transaction table, only after the retry's own write concern is met. While no majority holds the write, a retry
 * with {@code w: "majority"} and a {@code wtimeout} gets the write's result with {@code writeConcernError} 64; once the
 * secondaries apply it, the same retry answers without one. The {@code $inc} runs once throughout.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReplayedRetryWriteConcernTest {

    static final Instant NOW = Instant.now();
    static final String MAJORITY_SOON = "{w: 'majority', wtimeout: 300}";

    @Test
    void aRetryAnsweredFromTheRecordWaitsForItsWriteConcern() throws Exception {
        try (TieredStack stack = new TieredStack(
                Duration.ofSeconds(20), Duration.ofMillis(5), ReadConsistency.LINEARIZABLE, TierPair.embeddedFast(3))) {
            EmbeddedReplicaSet fast = stack.tiers.embeddedFast().orElseThrow();
            stack.startFeeder();
            stack.coverSince(NOW.minus(Duration.ofHours(1)));
            stack.archiveOrders()
                    .insertOne(SessionConsistencyTest.order(1, NOW.minus(Duration.ofHours(5)), "cold")
                            .append("n", new BsonInt32(0)));
            AtomicBoolean paused = new AtomicBoolean();
            // the write read both tiers and is about to run its transaction: from here on no secondary applies it
            stack.writeRaces.set(point -> {
                if (point == WriteRaces.Point.GUARDED_WRITE_TIERS_READ && paused.compareAndSet(false, true)) {
                    fast.secondaries().forEach(fast::pauseReplication);
                }
            });
            UUID lsid = UUID.randomUUID();
            try (Raw raw = new Raw(stack.proxy.port())) {
                try {
                    BsonDocument first = raw.command(inc(lsid, MAJORITY_SOON));
                    assertThat(paused).as("the guarded path ran").isTrue();
                    assertThat(first.getNumber("nModified").intValue())
                            .as("%s", first)
                            .isEqualTo(1);
                    assertThat(first.getDocument("writeConcernError")
                                    .getNumber("code")
                                    .intValue())
                            .as("committed on the primary alone: %s", first)
                            .isEqualTo(64);

                    BsonDocument retry = raw.command(inc(lsid, MAJORITY_SOON));
                    assertThat(retry.getNumber("nModified").intValue())
                            .as("the first attempt's result: %s", retry)
                            .isEqualTo(1);
                    assertThat(retry.isDocument("writeConcernError"))
                            .as("a majority does not hold the write yet, so the retry cannot say it does: %s", retry)
                            .isTrue();
                    assertThat(retry.getDocument("writeConcernError")
                                    .getNumber("code")
                                    .intValue())
                            .isEqualTo(64);
                } finally {
                    fast.secondaries().forEach(fast::resumeReplication);
                }
                BsonDocument afterReplication = raw.command(inc(lsid, "{w: 'majority'}"));
                assertThat(afterReplication.getNumber("nModified").intValue())
                        .as("%s", afterReplication)
                        .isEqualTo(1);
                assertThat(afterReplication.containsKey("writeConcernError"))
                        .as("a majority holds it now: %s", afterReplication)
                        .isFalse();
            }
            assertThat(stack.orders()
                            .find(Filters.eq("_id", 1))
                            .first()
                            .getNumber("n")
                            .intValue())
                    .as("the $inc ran once")
                    .isEqualTo(1);
        }
    }

    private static BsonDocument inc(UUID lsid, String writeConcern) {
        return BsonDocument.parse("{update: 'orders', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}], writeConcern: "
                        + writeConcern + "}")
                .append("lsid", new BsonDocument("id", new BsonBinary(lsid, UuidRepresentation.STANDARD)))
                .append("txnNumber", new BsonInt64(1))
                .append("$db", new BsonString("shop"));
    }
}
