package io.thermocline.benchmarks.tiering;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A short load for profiling the request path (docs/benchmarks/tiering.md, "Request-path CPU"):
 * {@code PointLoad <uri> <threads> <seconds> <docs> [noload]} inserts {@code docs} documents dated now
 * (so the fast tier holds them), then runs 95 % {@code find({_id})} and 5 % {@code updateOne} by
 * {@code _id} from {@code threads} threads with the sync driver, and prints the ops/s.
 */
public final class PointLoad {
    private PointLoad() {
    }

    public static void main(String[] a) throws Exception {
        String uri = a[0]; int threads = Integer.parseInt(a[1]); int secs = Integer.parseInt(a[2]); int docs = Integer.parseInt(a[3]);
        boolean load = a.length < 5 || !a[4].equals("noload");
        try (MongoClient c = MongoClients.create(com.mongodb.MongoClientSettings.builder().applyConnectionString(new com.mongodb.ConnectionString(uri)).applyToConnectionPoolSettings(b -> b.maxSize(threads)).build())) {
            MongoCollection<Document> coll = c.getDatabase("ycsb").getCollection("usertable");
            if (load) {
                List<Document> batch = new ArrayList<>();
                Date now = new Date();
                for (int i = 0; i < docs; i++) {
                    Document d = new Document("_id", "user" + i).append("createdAt", now);
                    for (int f = 0; f < 10; f++) d.append("field" + f, "x".repeat(100));
                    batch.add(d);
                    if (batch.size() == 500) { coll.insertMany(batch); batch.clear(); }
                }
                if (!batch.isEmpty()) coll.insertMany(batch);
            }
            AtomicLong ops = new AtomicLong(); AtomicLong errs = new AtomicLong();
            long end = System.nanoTime() + secs * 1_000_000_000L;
            ExecutorService ex = Executors.newFixedThreadPool(threads);
            for (int t = 0; t < threads; t++) ex.submit(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                while (System.nanoTime() < end) {
                    String id = "user" + r.nextInt(docs);
                    try {
                        if (r.nextInt(100) < 95) coll.find(new Document("_id", id)).first();
                        else coll.updateOne(Filters.eq("_id", id), Updates.set("field" + r.nextInt(10), "y".repeat(100)));
                        ops.incrementAndGet();
                    } catch (Exception e) { if (errs.incrementAndGet() < 5) e.printStackTrace(); }
                }
            });
            ex.shutdown(); ex.awaitTermination(secs + 60, TimeUnit.SECONDS);
            System.out.printf("ops=%d ops/s=%.0f errors=%d%n", ops.get(), ops.get() / (double) secs, errs.get());
        }
    }
}
