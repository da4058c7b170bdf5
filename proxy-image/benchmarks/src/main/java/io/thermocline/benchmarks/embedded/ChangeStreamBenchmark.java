package io.thermocline.benchmarks.embedded;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.embedded.EmbeddedReplicaSet;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * Embedded replica set: cold start time, CPU burned by an idle change stream, and the cost of a
 * change-stream getMore as the oplog grows. Prints a table; not a test.
 *
 * <p>Run: {@code mvn -q -o -Pbench -pl proxy-image/benchmarks -am package -DskipTests} then
 * {@code java -cp "$(cat proxy-image/benchmarks/target/classpath.txt):proxy-image/benchmarks/target/classes"
 * io.thermocline.benchmarks.embedded.ChangeStreamBenchmark} (see docs/benchmarks/embedded-change-streams.md).
 */
public final class ChangeStreamBenchmark {
    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private ChangeStreamBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.startSingle()) {
            System.out.printf("cold start of a one-member set (first in JVM): %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        }
        long t1 = System.nanoTime();
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.startSingle()) {
            System.out.printf("warm start of a one-member set: %d ms%n", (System.nanoTime() - t1) / 1_000_000);
        }
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.startSingle();
             MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoCollection<Document> watched = client.getDatabase("bench").getCollection("watched");
            watched.insertOne(new Document("_id", "warmup"));
            double baseline = idleCpu(null, 10);
            double idle;
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                     watched.watch().maxAwaitTime(1, TimeUnit.SECONDS).cursor()) {
                idle = idleCpu(cursor, 10);
            }
            System.out.printf("process CPU while idle, no change stream: %.2f%% of one core%n", baseline);
            System.out.printf("process CPU while idle, one change stream tailing (maxAwaitTime 1 s): %.2f%% of one core%n", idle);

            MongoCollection<Document> filler = client.getDatabase("bench").getCollection("filler")
                .withWriteConcern(WriteConcern.W1);
            System.out.println();
            System.out.println("| oplog entries | getMore returning 1 event, mean us | p50 us |");
            System.out.println("|---:|---:|---:|");
            int filled = 0;
            for (int target : new int[] {1_000, 10_000, 50_000}) {
                filled = fill(filler, filled, target);
                try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         watched.watch().maxAwaitTime(1, TimeUnit.SECONDS).cursor()) {
                    List<Long> micros = new ArrayList<>();
                    for (int i = 0; i < 300; i++) {
                        watched.withWriteConcern(WriteConcern.W1).insertOne(new Document("i", i));
                        long start = System.nanoTime();
                        ChangeStreamDocument<Document> event = cursor.tryNext();
                        while (event == null) {
                            event = cursor.tryNext();
                        }
                        micros.add((System.nanoTime() - start) / 1_000);
                    }
                    micros.sort(Long::compare);
                    double mean = micros.stream().mapToLong(Long::longValue).average().orElse(0);
                    System.out.printf("| %,d | %.0f | %d |%n", rs.oplogSize(), mean, micros.get(micros.size() / 2));
                }
            }
        }
    }

    private static int fill(MongoCollection<Document> filler, int from, int to) {
        List<Document> batch = new ArrayList<>();
        for (int i = from; i < to; i++) {
            batch.add(new Document("_id", i).append("pad", "x".repeat(64)));
            if (batch.size() == 1_000) {
                filler.insertMany(batch, new InsertManyOptions().ordered(false));
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            filler.insertMany(batch);
        }
        return to;
    }

    /** Percent of one core used by the whole process over some seconds, optionally while a stream tails. */
    private static double idleCpu(MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor, int seconds) {
        long cpuBefore = OS.getProcessCpuTime();
        long wallBefore = System.nanoTime();
        long end = wallBefore + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
            if (cursor != null) {
                cursor.tryNext();
            } else {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return 100.0 * (OS.getProcessCpuTime() - cpuBefore) / (System.nanoTime() - wallBefore);
    }
}
