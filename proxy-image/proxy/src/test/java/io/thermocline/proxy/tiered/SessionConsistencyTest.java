package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.tiered.RoutingMetrics.Served;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** Read-your-writes across tiers: a read the proxy sends to the archive waits for the feeder, or fails retryably. */
class SessionConsistencyTest {

    static BsonDocument order(int id, Instant createdAt, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
                .append("state", new BsonString(state));
    }

    @Test
    void writeThenArchiveRoutedReadAlwaysSeesTheWrite() throws Exception {
        // a slow feeder: without the causal wait, the archive would not have the write yet
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(150))) {
            stack.startFeeder();
            Instant old = Instant.now().minus(Duration.ofHours(2));
            Date archiveOnly = Date.from(old.plus(Duration.ofMinutes(30)));
            for (int i = 1; i <= 15; i++) {
                stack.orders().insertOne(order(i, old.minusSeconds(i), "new"));
                List<BsonDocument> seen = stack.orders().find(Filters.lt("createdAt", archiveOnly)).into(new ArrayList<>());
                assertThat(seen).as("insert %d visible to the archive-routed read", i).contains(order(i, old.minusSeconds(i), "new"));

                stack.orders().updateOne(Filters.eq("_id", i), Updates.set("state", "paid"));
                assertThat(stack.orders().find(Filters.and(Filters.lt("createdAt", archiveOnly), Filters.eq("_id", i))).first())
                        .as("update %d visible", i).isEqualTo(order(i, old.minusSeconds(i), "paid"));

                if (i % 3 == 0) {
                    stack.orders().deleteOne(Filters.eq("_id", i));
                    assertThat(stack.orders().countDocuments(Filters.and(Filters.lt("createdAt", archiveOnly), Filters.eq("_id", i))))
                            .as("delete %d visible", i).isZero();
                }
            }
            assertThat(stack.routing.metrics().count("read", Served.ARCHIVE)).isGreaterThanOrEqualTo(15);
        }
    }

    @Test
    void archiveReadFailsRetryablyWhileTheFeederIsBehindThenSucceeds() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofMillis(300), Duration.ofMillis(20))) {
            stack.startFeeder();
            Instant old = Instant.now().minus(Duration.ofHours(2));
            stack.orders().insertOne(order(1, old, "before"));
            assertThat(stack.orders().countDocuments(Filters.lt("createdAt", Date.from(old.plusSeconds(1))))).isEqualTo(1);

            stack.stopFeeder();
            stack.orders().insertOne(order(2, old, "while the feeder is down"));
            assertThatThrownBy(() -> stack.orders().find(Filters.lt("createdAt", Date.from(old.plusSeconds(1)))).into(new ArrayList<>()))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(262);
                        assertThat(e.getMessage()).contains("causal point").contains("proxy.causalWaitTimeout");
                    });

            stack.startFeeder();
            assertThat(stack.orders().countDocuments(Filters.lt("createdAt", Date.from(old.plusSeconds(1))))).isEqualTo(2);
        }
    }
}
