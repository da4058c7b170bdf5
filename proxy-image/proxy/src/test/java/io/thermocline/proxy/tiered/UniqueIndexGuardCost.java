package io.thermocline.proxy.tiered;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A benchmark, not a test (off unless {@code -Dthermocline.bench=true}): what the unique-index guard costs
 * an insert through the proxy. One client inserts hot documents into the tiered collection without a unique
 * secondary index, then with one; prints the mean per insert. See docs/benchmarks, "Unique indexes across tiers".
 */
@org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "thermocline.bench", matches = "true")
@org.junit.jupiter.api.Timeout(value = 600, unit = java.util.concurrent.TimeUnit.SECONDS)
class UniqueIndexGuardCost {

    @org.junit.jupiter.api.Test
    void insertsWithAndWithoutAUniqueIndex() throws Exception {
        int n = Integer.getInteger("thermocline.bench.inserts", 2000);
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            stack.startFeeder();
            stack.coverSince(Instant.now().minus(Duration.ofHours(1)));
            MongoCollection<BsonDocument> orders = stack.orders();
            run(orders, 0, 300); // warm-up
            double without = run(orders, 10_000, n);
            orders.createIndex(Indexes.ascending("sku"), new IndexOptions().unique(true));
            Thread.sleep(1500);
            run(orders, 20_000, 300); // warm-up
            double with = run(orders, 30_000, n);
            org.assertj.core.api.Assertions.assertThat(stack.orders().countDocuments()).isEqualTo(2L * n + 600);
            System.out.printf("inserts=%d  no unique index: %.3f ms/insert  unique index on sku: %.3f ms/insert  (x%.2f)%n",
                    n, without, with, with / without);
        }
    }

    private static double run(MongoCollection<BsonDocument> orders, int from, int n) {
        long start = System.nanoTime();
        for (int i = from; i < from + n; i++) {
            orders.insertOne(new BsonDocument("_id", new BsonInt32(1_000_000 + i)).append("createdAt", new BsonDateTime(System.currentTimeMillis()))
                    .append("sku", new BsonString("sku-" + i)));
        }
        return (System.nanoTime() - start) / 1e6 / n;
    }
}
