package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.MetadataStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 37: a write the archive refuses for good (here a unique index only the archive has) is a dead letter: the
 * fast tier holds the acknowledged version, the archive the one before it. Until 2026-12-07 mirrored-through passed
 * it, and a read routed to the archive answered the version before an acknowledged update. Now mirrored-through stays
 * below it until the cause is fixed and the feeder's retry lands it: such a read waits and fails retryably, then,
 * once the letter is closed, sees the update.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeadLetteredReadTest {

    private static final Instant RECENT = Instant.now().minus(Duration.ofMinutes(5));

    @Test
    void aReadRoutedToTheArchiveNeverAnswersTheVersionBeforeADeadLetteredUpdate() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(2), Duration.ofMillis(5))) {
            stack.archiveOrders().createIndex(Indexes.ascending("email"), new IndexOptions().unique(true));
            stack.archiveOrders()
                    .insertOne(new BsonDocument("_id", new BsonString("cold"))
                            .append(
                                    "createdAt",
                                    new BsonDateTime(Date.from(RECENT.minus(Duration.ofDays(30)))
                                            .getTime()))
                            .append("email", new BsonString("taken@example.com")));
            stack.startFeeder();
            stack.orders()
                    .insertOne(new BsonDocument("_id", new BsonInt32(1))
                            .append("createdAt", new BsonDateTime(RECENT.toEpochMilli()))
                            .append("email", new BsonString("free@example.com"))
                            .append("state", new BsonString("v1")));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> stack.archiveOrders().countDocuments(Filters.eq("_id", 1)) == 1);

            // acknowledged on the fast tier; the archive refuses its mirror for good (E11000 on email)
            stack.orders()
                    .updateOne(
                            Filters.eq("_id", 1),
                            Updates.combine(Updates.set("email", "taken@example.com"), Updates.set("state", "v2")));
            DeadLetters letters = new DeadLetters(new MetadataStore(stack.fastWorkers));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> letters.count() == 1);

            // no age bound: routed to the archive, which holds v1
            assertThatThrownBy(() -> stack.orders().countDocuments(Filters.eq("state", "v2")))
                    .as("the archive lacks an acknowledged write: refused, not answered 0")
                    .isInstanceOf(MongoException.class)
                    .satisfies(e -> assertThat(((MongoException) e).getMessage())
                            .contains("proxy.causalWaitTimeout")
                            .contains("thermocline_feeder_dead_letters"));
            assertThat(stack.archiveOrders().find(Filters.eq("_id", 1)).first().getString("state"))
                    .as("the archive still holds the version before the update")
                    .isEqualTo(new BsonString("v1"));

            stack.archiveOrders().deleteOne(Filters.eq("_id", "cold")); // the operator resolves the conflict
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> letters.count() == 0);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptionsInstanceOf(MongoException.class)
                    .until(() -> stack.orders().countDocuments(Filters.eq("state", "v2")) == 1);
        }
    }
}
