package io.thermocline.proxy.tiered;

import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoDatabase;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The cursors of tiered reads (from the fast tier and from the archive) keep mongod's getMore rules:
 * another namespace gets 13 with mongod's message, another session 50738, and the cursor goes on for its own.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TieredGetMoreNamespaceTest {

    @Test
    void tieredCursorsRefuseAGetMoreOnAnotherNamespace() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            stack.startFeeder();
            Instant now = Instant.now();
            for (int id = 1; id <= 6; id++) {
                stack.orders().insertOne(SessionConsistencyTest.order(id, now.minusSeconds(id), "recent"));
                stack.archiveOrders().insertOne(SessionConsistencyTest.order(100 + id, now.minus(Duration.ofHours(3)), "archived"));
            }
            MongoDatabase shop = stack.client.getDatabase(TieredStack.POLICY.database());
            // recent documents are served by the fast tier, a range reaching past the window by the archive
            for (BsonDocument filter : new BsonDocument[] {
                    new BsonDocument("createdAt", new BsonDocument("$gte", new org.bson.BsonDateTime(now.minusSeconds(600).toEpochMilli()))),
                    new BsonDocument("createdAt", new BsonDocument("$lt", new org.bson.BsonDateTime(now.minus(Duration.ofHours(2)).toEpochMilli())))}) {
                try (ClientSession session = stack.client.startSession()) {
                    Document first = shop.runCommand(session, new Document("find", "orders").append("filter", filter).append("batchSize", 2));
                    Document cursor = first.get("cursor", Document.class);
                    long id = cursor.getLong("id");
                    assertThat(id).as(first.toJson()).isNotZero();
                    assertThat(cursor.getString("ns")).isEqualTo("shop.orders");
                    assertThatThrownBy(() -> shop.runCommand(session, getMore(id, "customers")))
                            .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                                assertThat(e.getErrorCode()).isEqualTo(13);
                                assertThat(e.getErrorMessage()).isEqualTo("Requested getMore on namespace 'shop.customers',"
                                        + " but cursor belongs to a different namespace shop.orders");
                            });
                    try (ClientSession other = stack.client.startSession()) {
                        // and only in the session it was opened in (mongod's 50738 without authorization)
                        assertThatThrownBy(() -> shop.runCommand(other, getMore(id, "orders")))
                                .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(50738));
                    }
                    Document next = shop.runCommand(session, getMore(id, "orders"));
                    assertThat(next.get("cursor", Document.class).getList("nextBatch", Document.class)).as(filter.toJson()).hasSize(2);
                }
            }
        }
    }

    private static BsonDocument getMore(long id, String collection) {
        return new BsonDocument("getMore", new BsonInt64(id)).append("collection", new BsonString(collection))
                .append("batchSize", new BsonInt32(2));
    }
}
