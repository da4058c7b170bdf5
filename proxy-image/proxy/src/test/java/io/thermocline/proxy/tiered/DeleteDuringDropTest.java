package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A delete of archive-only documents while their collection's drop is under way (its {@code DROP_STARTED}
 * fence written, as {@code DdlFanOut} writes it before dropping the archive's collection): the delete must
 * not copy them into the fast tier (the copy would recreate a collection being dropped); their tombstones
 * alone delete them. Without the check, the fast tier's stream shows each copy's insert and delete.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeleteDuringDropTest {

    static TieredStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(10));
        stack.startFeeder();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void archiveOnlyDocumentsAreDeletedByTheirTombstonesAlone() {
        Instant old = Instant.now().minus(Duration.ofHours(4));
        stack.archiveOrders().insertMany(List.of(TieredProxyTest.order(1, old, "cold"), TieredProxyTest.order(2, old, "cold"),
                TieredProxyTest.order(3, old, "cold")));
        new Fences(new MetadataStore(stack.fastWorkers)).writeDrop(TieredStack.POLICY.namespace(), Fence.Kind.DROP_STARTED);
        try (var fastStream = stack.fastOrders().watch(BsonDocument.class).cursor()) {
            assertThat(stack.orders().deleteOne(Filters.eq("_id", 1)).getDeletedCount()).isEqualTo(1);
            assertThat(stack.orders().deleteMany(Filters.eq("state", "cold")).getDeletedCount()).isEqualTo(2);
            stack.fastOrders().insertOne(TieredProxyTest.order(9, Instant.now(), "sentinel"));
            List<Object> keys = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!keys.contains(9) && System.nanoTime() < deadline) {
                ChangeStreamDocument<BsonDocument> event = fastStream.tryNext();
                if (event != null) {
                    keys.add(event.getOperationTypeString() + " " + event.getDocumentKey().getInt32("_id").getValue());
                    if (new BsonInt32(9).equals(event.getDocumentKey().get("_id"))) {
                        keys.add(9);
                    }
                }
            }
            assertThat(keys).as("the fast tier's collection saw no copy").containsExactly("insert 9", 9);
        }
        for (int id = 1; id <= 3; id++) {
            BsonDocument fence = stack.fastDirect.getDatabase(MetadataStore.DATABASE).getCollection(MetadataStore.FENCES, BsonDocument.class)
                    .find(Filters.eq("_id", Fence.key(TieredStack.POLICY.namespace(), new BsonInt32(id)))).first();
            assertThat(fence).as("tombstone of %d", id).isNotNull();
            assertThat(fence.getString("kind").getValue()).isEqualTo("USER_DELETE");
        }
    }
}
