package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bug (issue 10, nothing lost): writes the proxy acknowledged before the feeder's very first start
 * (the proxy and the feeder start independently, e.g. under the operator) never reached the archive,
 * and the read barrier took them as mirrored: an archive-routed count returned 0 instead of 1. After
 * the first start, archive reads and the archive itself must show every insert, update and delete,
 * whatever the start order, also with writes running while the feeder starts.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FirstFeederStartTest {

    static final Instant NOW = Instant.now();
    static final Instant COLD = NOW.minus(Duration.ofHours(5));

    static BsonDocument order(String id, Instant createdAt, String customer, String state) {
        return new BsonDocument("_id", new BsonString(id)).append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
                .append("customer", new BsonString(customer)).append("state", new BsonString(state));
    }

    @Test
    void writesAcknowledgedBeforeTheFirstFeederStartAreInTheArchive() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(30))) {
            stack.archiveOrders().insertMany(List.of(order("cold-kept", COLD, "ann", "old"), order("cold-deleted", COLD, "ann", "old")));
            // no feeder yet: the proxy accepts these
            stack.orders().insertMany(List.of(order("hot-1", NOW, "ann", "new"), order("hot-2", NOW, "ann", "new"),
                    order("hot-3", NOW, "ann", "new")));
            assertThat(stack.orders().updateOne(Filters.eq("_id", "hot-2"), Updates.set("state", "paid")).getModifiedCount()).isEqualTo(1);
            assertThat(stack.orders().deleteOne(Filters.eq("_id", "hot-3")).getDeletedCount()).isEqualTo(1);
            assertThat(stack.orders().deleteOne(Filters.eq("_id", "cold-deleted")).getDeletedCount()).isEqualTo(1);

            stack.startFeeder();

            // by customer: no coverage proves it, so the archive answers
            assertThat(stack.orders().countDocuments(Filters.eq("customer", "ann"))).as("archive-routed count").isEqualTo(3);
            assertThat(stack.orders().countDocuments(Filters.and(Filters.eq("customer", "ann"), Filters.eq("state", "paid"))))
                    .as("the update").isEqualTo(1);
            assertThat(stateById(stack.archiveOrders())).as("the archive itself")
                    .isEqualTo(Map.of("cold-kept", "old", "hot-1", "new", "hot-2", "paid"));
        }
    }

    /**
     * Clients write through the proxy from before the feeder's first start until after it; each
     * client owns one customer, so once the feeder streams, its archive-routed count must equal what it
     * wrote, and at the end the archive must hold exactly what was acknowledged.
     */
    @Test
    void writesRacingTheFirstFeederStartAreAllInTheArchive() throws Exception {
        int clients = 4;
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(30))) {
            AtomicBoolean streaming = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch warmedUp = new CountDownLatch(clients);
            ConcurrentLinkedQueue<String> misses = new ConcurrentLinkedQueue<>();
            List<Map<String, String>> expected = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(clients);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    String customer = "client-" + c;
                    Map<String, String> mine = new TreeMap<>();
                    expected.add(mine);
                    done.add(pool.submit(() -> {
                        try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + stack.proxy.port())) {
                            writeUntilStopped(client, customer, mine, warmedUp, streaming, stop, misses);
                        }
                        return null;
                    }));
                }
                assertThat(warmedUp.await(30, TimeUnit.SECONDS)).as("every client wrote before the feeder started").isTrue();
                stack.startFeeder();
                streaming.set(true);
                Thread.sleep(1500); // writes and reads go on after the first start
                stop.set(true);
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(misses).as("archive-routed counts that missed a write the same client had acknowledged").isEmpty();
            Map<String, String> all = new TreeMap<>();
            expected.forEach(all::putAll);
            for (int c = 0; c < clients; c++) {
                assertThat(stack.orders().countDocuments(Filters.eq("customer", "client-" + c))).isEqualTo(expected.get(c).size());
            }
            assertThat(stateById(stack.archiveOrders())).as("the archive holds exactly what was acknowledged").isEqualTo(all);
        }
    }

    /** Inserts, updates every third, deletes every fifth; once the feeder streams, counts after each write. */
    private static void writeUntilStopped(MongoClient client, String customer, Map<String, String> mine, CountDownLatch warmedUp,
                                          AtomicBoolean streaming, AtomicBoolean stop, ConcurrentLinkedQueue<String> misses) {
        MongoCollection<BsonDocument> orders = FleetReadConsistencyTest.orders(client);
        for (int i = 1; !stop.get(); i++) {
            boolean counting = streaming.get();
            String id = customer + "-" + i;
            orders.insertOne(order(id, NOW, customer, "new"));
            mine.put(id, "new");
            if (i % 3 == 0) {
                String earlier = customer + "-" + (i - 1);
                orders.updateOne(Filters.eq("_id", earlier), Updates.set("state", "paid"));
                mine.replace(earlier, "paid");
            }
            if (i % 5 == 0) {
                String earlier = customer + "-" + (i - 2);
                orders.deleteOne(Filters.eq("_id", earlier));
                mine.remove(earlier);
            }
            if (i == 20) {
                warmedUp.countDown();
            }
            if (counting) {
                long n = orders.countDocuments(Filters.eq("customer", customer));
                if (n != mine.size()) {
                    misses.add(customer + " after " + id + ": " + n + " instead of " + mine.size());
                }
            }
        }
    }

    private static Map<String, String> stateById(MongoCollection<BsonDocument> collection) {
        Map<String, String> states = new TreeMap<>();
        for (BsonDocument d : collection.find().projection(Projections.include("state")).sort(Sorts.ascending("_id"))) {
            states.put(d.getString("_id").getValue(), d.getString("state").getValue());
        }
        return states;
    }
}
