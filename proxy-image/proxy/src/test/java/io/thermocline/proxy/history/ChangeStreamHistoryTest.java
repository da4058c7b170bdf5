package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import io.thermocline.proxy.history.ChangeStreamChecker.Anomaly;
import io.thermocline.proxy.history.ChangeStreamChecker.Event;
import io.thermocline.proxy.tiered.TierPair;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Change-stream consumers under the concurrent history: the clients of {@link ConcurrentHistoryTest}
 * (eight, over two proxies, inserts, updates and deletes of documents around the window edge, adopted
 * documents in the archive only) run while the feeder, warmer and evictor are killed and restarted, and
 * three consumers watch the collection: one through each proxy, and one that resumes on the other proxy
 * every {@value #HOP_EVERY} events. {@link ChangeStreamChecker} checks each consumer's events against the
 * acknowledged history (none missing, none spurious: no copy-up, warm copy or eviction shows, order of
 * each document's acknowledged writes, the final state) and that all three saw the same events.
 *
 * <p>Seeds: {@code -Dhistory.streamSeeds=1-200} ({@code 1-2} by default); {@code -Dhistory.operations=N}
 * operations per client. Each seed prints one line: operations, events, hops, anomalies.
 */
class ChangeStreamHistoryTest {

    static final int HOP_EVERY = 20;
    static final int START = -1;
    static final int END = -2;

    static LongStream seeds() {
        return Seeds.from("history.streamSeeds", "1-2");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyConsumerSeesExactlyTheAcknowledgedWritesInOrder(long seed) throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        Map<String, List<Event>> seen = new LinkedHashMap<>();
        AtomicInteger hops = new AtomicInteger();
        List<Doc> finals;
        String workersRan;
        try (TierPair tiers = TierPair.open(); TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable")) {
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<MongoClient> clients = new ArrayList<>();
            try {
                MongoClient[] byProxy = {MongoClients.create(fleet.uri(List.of(0))), MongoClients.create(fleet.uri(List.of(1)))};
                clients.addAll(List.of(byProxy));
                CountDownLatch opened = new CountDownLatch(3);
                Map<String, Future<List<Event>>> consumers = new LinkedHashMap<>();
                consumers.put("proxy0", pool.submit(() -> consume(byProxy, 0, false, opened, hops)));
                consumers.put("proxy1", pool.submit(() -> consume(byProxy, 1, false, opened, hops)));
                consumers.put("hopping", pool.submit(() -> consume(byProxy, 0, true, opened, hops)));
                assertThat(opened.await(30, TimeUnit.SECONDS)).as("streams opened").isTrue();
                orders(byProxy[0]).insertOne(HistoryClient.bson(new Doc(START, 0, System.currentTimeMillis(), 0)));
                try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                    try {
                        ConcurrentHistoryTest.runClients(fleet, history, keys, random, ConcurrentHistoryTest.OPERATIONS, false, false,
                                () -> false);
                    } finally {
                        chaos.quiesce();
                    }
                    workersRan = "worker crashes=" + chaos.crashes.get() + " kills=" + chaos.kills.get();
                    // the workers keep running (quiesced: no more crashes) until the final state is read
                    orders(byProxy[1]).insertOne(HistoryClient.bson(new Doc(END, 0, System.currentTimeMillis(), 0)));
                    for (Map.Entry<String, Future<List<Event>>> consumer : consumers.entrySet()) {
                        seen.put(consumer.getKey(), consumer.getValue().get(120, TimeUnit.SECONDS));
                    }
                    finals = ConcurrentHistoryTest.finalStates(fleet).get("proxy").stream().filter(d -> d.key() != START && d.key() != END)
                            .toList();
                }
            } finally {
                pool.shutdownNow();
                clients.forEach(MongoClient::close);
            }
        }
        List<Op> ops = history.ops();
        List<Anomaly> anomalies = ChangeStreamChecker.check(ops, seen, finals);
        String summary = String.format("seed %d: %d ops (%s), %s, events %s, %d hops, %d anomalies %s, %.1f s", seed, ops.size(),
                ConcurrentHistoryTest.outcomes(ops), workersRan,
                seen.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().size()).collect(Collectors.joining(" ")), hops.get(),
                anomalies.size(), anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("ChangeStreamHistoryTest " + summary);
        assertThat(anomalies).as("%s%nrerun: -Dhistory.streamSeeds=%d%n%s", summary, seed,
                anomalies.stream().limit(12).map(Anomaly::toString).collect(Collectors.joining("\n"))).isEmpty();
    }

    static MongoCollection<BsonDocument> orders(MongoClient client) {
        return client.getDatabase(TieredFleet.POLICY.database()).getCollection(TieredFleet.POLICY.collection(), BsonDocument.class);
    }

    /**
     * One consumer: its events between the start and end sentinels. {@code hopping}: every {@value #HOP_EVERY}
     * events it closes its stream and resumes after the last event it saw, through the other proxy.
     */
    static List<Event> consume(MongoClient[] byProxy, int proxy, boolean hopping, CountDownLatch opened, AtomicInteger hops) {
        List<Event> events = new ArrayList<>();
        boolean recording = false;
        BsonDocument token = null;
        int sinceHop = 0;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(8);
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = orders(byProxy[proxy]).watch(BsonDocument.class).cursor();
        opened.countDown();
        try {
            while (System.nanoTime() < deadline) {
                if (hopping && sinceHop >= HOP_EVERY && token != null) {
                    stream.close();
                    proxy = 1 - proxy;
                    stream = orders(byProxy[proxy]).watch(BsonDocument.class).resumeAfter(token).cursor();
                    hops.incrementAndGet();
                    sinceHop = 0;
                }
                ChangeStreamDocument<BsonDocument> change = stream.tryNext();
                if (change == null) {
                    continue;
                }
                token = change.getResumeToken();
                sinceHop++;
                Event event = event(change);
                if (event.key() == START) {
                    recording = true;
                } else if (event.key() == END) {
                    return events;
                } else if (recording) {
                    events.add(event);
                }
            }
            throw new AssertionError("no end sentinel within 8 minutes; " + events.size() + " events");
        } finally {
            stream.close();
        }
    }

    static Event event(ChangeStreamDocument<BsonDocument> change) {
        BsonValue id = change.getDocumentKey() == null ? null : change.getDocumentKey().get("_id");
        int key = id != null && id.isInt32() ? id.asInt32().getValue() : Integer.MIN_VALUE;
        long value = -1;
        BsonDocument written = change.getFullDocument() != null ? change.getFullDocument()
                : change.getUpdateDescription() != null ? change.getUpdateDescription().getUpdatedFields() : null;
        if (written != null) {
            value = written.isInt64("value") ? written.getInt64("value").getValue() : -3;
        }
        return new Event(change.getOperationTypeString(), key, value);
    }
}
