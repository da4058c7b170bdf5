package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.config.ReadConsistency;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Read-your-writes across tiers: a read the proxy sends to the archive waits for the feeder, or fails retryably. */
class SessionConsistencyTest {

    static BsonDocument order(int id, Instant createdAt, String state) {
        return new BsonDocument("_id", new BsonInt32(id))
                .append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
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
                List<BsonDocument> seen = stack.orders()
                        .find(Filters.lt("createdAt", archiveOnly))
                        .into(new ArrayList<>());
                assertThat(seen)
                        .as("insert %d visible to the archive-routed read", i)
                        .contains(order(i, old.minusSeconds(i), "new"));

                stack.orders().updateOne(Filters.eq("_id", i), Updates.set("state", "paid"));
                assertThat(stack.orders()
                                .find(Filters.and(Filters.lt("createdAt", archiveOnly), Filters.eq("_id", i)))
                                .first())
                        .as("update %d visible", i)
                        .isEqualTo(order(i, old.minusSeconds(i), "paid"));

                if (i % 3 == 0) {
                    stack.orders().deleteOne(Filters.eq("_id", i));
                    assertThat(stack.orders()
                                    .countDocuments(
                                            Filters.and(Filters.lt("createdAt", archiveOnly), Filters.eq("_id", i))))
                            .as("delete %d visible", i)
                            .isZero();
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
            assertThat(stack.orders().countDocuments(Filters.lt("createdAt", Date.from(old.plusSeconds(1)))))
                    .isEqualTo(1);

            stack.stopFeeder();
            stack.orders().insertOne(order(2, old, "while the feeder is down"));
            assertThatThrownBy(() -> stack.orders()
                            .find(Filters.lt("createdAt", Date.from(old.plusSeconds(1))))
                            .into(new ArrayList<>()))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(262);
                        assertThat(e.getMessage()).contains("causal point").contains("proxy.causalWaitTimeout");
                    });

            stack.startFeeder();
            assertThat(stack.orders().countDocuments(Filters.lt("createdAt", Date.from(old.plusSeconds(1)))))
                    .isEqualTo(2);
        }
    }

    private static BsonTimestamp archiveClusterTime(TieredStack stack) {
        Document ping = stack.archiveDirect.getDatabase("admin").runCommand(new Document("ping", 1));
        return (BsonTimestamp) ping.get("$clusterTime", Document.class).get("clusterTime");
    }

    /**
     * A causally consistent session holds the latest operationTime it saw, from either tier: the proxy
     * never sends one tier's time to the other, where a real member refuses a point beyond its clock
     * (72) and an earlier one means nothing. Both directions: an untiered (pass-through) read after a
     * tiered write, and an archive-routed tiered read after an untiered write.
     */
    @Test
    void aCausalSessionMovingBetweenTieredAndUntieredCollectionsNeverSendsOneTiersTimeToTheOther() throws Exception {
        try (TieredStack stack =
                new TieredStack(Duration.ofSeconds(5), Duration.ofMillis(20), ReadConsistency.SESSION)) {
            MongoCollection<BsonDocument> customers =
                    stack.client.getDatabase("shop").getCollection("customers", BsonDocument.class);
            Instant old = Instant.now().minus(Duration.ofHours(2));
            stack.startFeeder();
            stack.stopFeeder(); // resumes later from here: meanwhile nothing writes to the archive but the client
            try (ClientSession session = stack.client.startSession(
                    ClientSessionOptions.builder().causallyConsistent(true).build())) {
                customers.insertOne(session, new BsonDocument("_id", new BsonInt32(1)));
                Thread.sleep(1_100); // the fast tier's next time falls in a later second than any archive time so far
                stack.orders().insertOne(session, order(1, old, "new"));
                assertThat(session.getOperationTime())
                        .as("the session's point is the fast tier's, ahead of the archive's clock")
                        .isGreaterThan(archiveClusterTime(stack));
                assertThat(customers.find(session, Filters.eq("_id", 1)).first())
                        .isEqualTo(new BsonDocument("_id", new BsonInt32(1)));
                assertThat(customers.countDocuments(session)).isEqualTo(1);

                stack.startFeeder();
                Thread.sleep(1_100); // now the archive's next time is ahead of every fast-tier time
                customers.insertOne(session, new BsonDocument("_id", new BsonInt32(2)));
                assertThat(stack.orders().countDocuments(session, Filters.eq("state", "new")))
                        .isEqualTo(1);
                assertThat(customers.countDocuments(session)).isEqualTo(2);
            }
        }
    }
}
