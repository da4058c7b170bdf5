package io.thermocline.embeddeddefault;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Random;
import org.bson.Document;

/**
 * The embedded default's demo data: orders spread evenly over the past year, written
 * straight into the archive as if it were the team's existing replica set. Seeded, so
 * every first start shows the same data.
 */
public final class SampleData {

    public static final String DATABASE = "demo";
    public static final String COLLECTION = "orders";
    public static final String AGE_FIELD = "createdAt";

    private static final String[] CUSTOMERS = {"ada", "grace", "linus", "barbara", "ken", "margaret", "dennis", "frances"};
    private static final String[] STATUSES = {"placed", "paid", "shipped", "delivered", "returned"};

    private SampleData() {
    }

    /** Loads {@code count} orders into the archive unless the collection already has documents; returns how many it wrote. */
    public static int loadInto(MongoClient archive, int count, Instant now) {
        MongoCollection<Document> orders = archive.getDatabase(DATABASE).getCollection(COLLECTION);
        if (orders.estimatedDocumentCount() > 0) {
            return 0;
        }
        orders.createIndex(Indexes.ascending(AGE_FIELD), new IndexOptions().name("createdAt_1"));
        Random random = new Random(20261129L);
        long yearMillis = Duration.ofDays(365).toMillis();
        List<Document> batch = new ArrayList<>(1000);
        for (int i = 0; i < count; i++) {
            Instant created = now.minusMillis((long) ((double) yearMillis * i / count));
            batch.add(new Document("_id", i + 1)
                    .append(AGE_FIELD, Date.from(created))
                    .append("customer", CUSTOMERS[random.nextInt(CUSTOMERS.length)])
                    .append("status", STATUSES[random.nextInt(STATUSES.length)])
                    .append("total", Math.round(random.nextDouble() * 50_000) / 100.0)
                    .append("items", 1 + random.nextInt(6)));
            if (batch.size() == 1000) {
                orders.insertMany(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            orders.insertMany(batch);
        }
        return count;
    }
}
