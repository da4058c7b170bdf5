package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.WarmerConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An application change stream through the proxy shows what one replica set shows for the same
 * acknowledged operations: every operation runs through the proxy on the tiered stack and, the same,
 * on a plain replica set holding the same documents (the {@code reference}); the two streams' events
 * must be equal (operation type, namespace, document key, full document, update description, in
 * order). Cold documents are in the archive only; the warmer, promotions and the evictor move
 * documents between the tiers meanwhile, and none of that may show.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ChangeStreamFidelityTest {

    static final Instant NOW = Instant.now();
    static final Duration OLD = Duration.ofHours(4);

    static TieredStack stack;
    static EmbeddedReplicaSet referenceSet;
    static MongoClient referenceClient;
    static MirrorBarrier barrier;
    /** What a stream opened before the warm-up saw of it and of one user insert (see {@link #start}). */
    static List<BsonDocument> duringWarmUp;

    static List<BsonDocument> duringWarmUpReference;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(10));
        stack.startFeeder();
        referenceSet = EmbeddedReplicaSet.builder().name("reference").build().start();
        referenceClient = MongoClients.create(referenceSet.connectionString());
        barrier = new MirrorBarrier(
                stack.fastWorkers, new MetadataStore(stack.fastWorkers), "change-stream-fidelity-test");
        // the adopted replica set: recent documents (the warmer copies them) and old ones
        List<BsonDocument> adopted = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            adopted.add(TieredProxyTest.order(i, NOW.minus(Duration.ofMinutes(10)), "recent"));
        }
        stack.archiveOrders().insertMany(adopted);
        reference().insertMany(adopted);
        try (var stream = stack.orders().watch(BsonDocument.class).cursor();
                var referenceStream = reference().watch(BsonDocument.class).cursor()) {
            Warmer warmer = new Warmer(
                    stack.fastWorkers,
                    stack.archiveWorkers,
                    List.of(TieredStack.POLICY),
                    new WarmerConfig(50, 100_000),
                    Warmer.Options.defaults()
                            .withBarrierTimeout(Duration.ofSeconds(10))
                            .withRegistry(new PrometheusRegistry())
                            .withFaults(FaultInjection.NONE));
            assertThat(warmer.warmAll()).as("warmed").isTrue();
            assertThat(stack.fastOrders().countDocuments(Filters.eq("state", "recent")))
                    .as("warm copies")
                    .isEqualTo(5);
            both(c -> c.updateOne(Filters.eq("_id", 1), Updates.set("state", "warm-updated")));
            duringWarmUp = until(stream, sentinel(stack.orders(), 90));
            duringWarmUpReference = until(referenceStream, sentinel(reference(), 90));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (stack.routing.table().coverage(TieredStack.POLICY.namespace()) instanceof CoverageBound.Nothing) {
            assertThat(System.nanoTime())
                    .as("the proxy follows the warmed coverage")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @AfterAll
    static void stop() {
        referenceClient.close();
        referenceSet.close();
        stack.close();
    }

    static MongoCollection<BsonDocument> reference() {
        return referenceClient
                .getDatabase(TieredStack.POLICY.database())
                .getCollection(TieredStack.POLICY.collection(), BsonDocument.class);
    }

    /** Documents only the archive holds (and the reference set, as the one replica set). */
    static void cold(int... ids) {
        for (int id : ids) {
            BsonDocument d = TieredProxyTest.order(id, NOW.minus(OLD), "cold").append("n", new BsonInt32(id));
            stack.archiveOrders().insertOne(d);
            reference().insertOne(d);
        }
    }

    /** Runs {@code op} through the proxy, then on the reference set. */
    static void both(Consumer<MongoCollection<BsonDocument>> op) {
        op.accept(stack.orders());
        op.accept(reference());
    }

    /** Inserts a last document; a stream is read up to its event. */
    static int sentinel(MongoCollection<BsonDocument> c, int id) {
        c.insertOne(TieredProxyTest.order(id, NOW, "sentinel"));
        return id;
    }

    /**
     * The bound on one wait for a stream's event: each wait ends when the event arrives (the driver's blocking
     * {@code next()}), so a loaded machine only makes it slower; the bound only turns a stream that never shows it into
     * a failure naming what it showed.
     */
    static final Duration EVENT_WAIT = Duration.ofSeconds(120);

    /** The stream's events up to the sentinel's insert (included), as compared: what a replica set's event says. */
    static List<BsonDocument> until(MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream, int sentinel) {
        List<BsonDocument> events = new CopyOnWriteArrayList<>();
        return assertTimeoutPreemptively(
                EVENT_WAIT,
                () -> {
                    while (true) {
                        ChangeStreamDocument<BsonDocument> event = stream.next(); // waits for the stream's next event
                        events.add(compared(event));
                        if (event.getDocumentKey() != null
                                && new BsonInt32(sentinel)
                                        .equals(event.getDocumentKey().get("_id"))) {
                            return List.copyOf(events);
                        }
                    }
                },
                () -> "no sentinel " + sentinel + " event within " + EVENT_WAIT.toSeconds() + " s; events so far: "
                        + events);
    }

    static BsonDocument compared(ChangeStreamDocument<BsonDocument> event) {
        BsonDocument d = new BsonDocument("op", new BsonString(event.getOperationTypeString()));
        if (event.getNamespace() != null) {
            d.append("ns", new BsonString(event.getNamespace().getFullName()));
        }
        if (event.getDocumentKey() != null) {
            d.append("key", event.getDocumentKey());
        }
        if (event.getFullDocument() != null) {
            d.append("fullDocument", event.getFullDocument());
        }
        if (event.getUpdateDescription() != null) {
            d.append(
                    "updated",
                    event.getUpdateDescription().getUpdatedFields() == null
                            ? new BsonDocument()
                            : event.getUpdateDescription().getUpdatedFields());
            d.append(
                    "removed",
                    new org.bson.BsonArray(
                            event.getUpdateDescription().getRemovedFields() == null
                                    ? List.of()
                                    : event.getUpdateDescription().getRemovedFields().stream()
                                            .map(f -> (org.bson.BsonValue) new BsonString(f))
                                            .toList()));
        }
        return d;
    }

    /** Opens a stream through the proxy and on the reference set, runs {@code ops} on both, and compares their events. */
    static List<BsonDocument> sameEvents(int sentinel, Runnable ops) {
        return sameEvents(sentinel, false, ops);
    }

    /**
     * @param multiDocument the operations are one multi-document statement: the order of its documents is the
     *                      server's plan's (unspecified by MongoDB), so the events are compared as a multiset
     */
    static List<BsonDocument> sameEvents(int sentinel, boolean multiDocument, Runnable ops) {
        try (var stream = stack.orders().watch(BsonDocument.class).cursor();
                var referenceStream = reference().watch(BsonDocument.class).cursor()) {
            ops.run();
            List<BsonDocument> proxied = until(stream, sentinel(stack.orders(), sentinel));
            List<BsonDocument> expected = until(referenceStream, sentinel(reference(), sentinel));
            if (multiDocument) {
                assertThat(proxied)
                        .as("the proxy's stream shows what one replica set shows")
                        .containsExactlyInAnyOrderElementsOf(expected);
                assertThat(proxied.get(proxied.size() - 1)).isEqualTo(expected.get(expected.size() - 1));
            } else {
                assertThat(proxied)
                        .as("the proxy's stream shows what one replica set shows")
                        .isEqualTo(expected);
            }
            return proxied;
        }
    }

    static List<String> types(List<BsonDocument> events) {
        return events.stream()
                .map(e -> e.getString("op").getValue() + " "
                        + e.getDocument("key").getInt32("_id").getValue())
                .toList();
    }

    @Test
    void warmCopiesAreInvisible() {
        assertThat(duringWarmUp).isEqualTo(duringWarmUpReference);
        assertThat(types(duringWarmUp)).containsExactly("update 1", "insert 90");
    }

    @Test
    void deleteOneByIdOfAnArchiveOnlyDocumentEmitsItsDelete() {
        cold(101);
        List<BsonDocument> events = sameEvents(
                109,
                () -> both(c -> assertThat(c.deleteOne(Filters.eq("_id", 101)).getDeletedCount())
                        .isEqualTo(1)));
        assertThat(types(events)).containsExactly("delete 101", "insert 109");
    }

    @Test
    void deleteOneByFilterOfAnArchiveOnlyDocumentEmitsItsDelete() {
        cold(111);
        List<BsonDocument> events = sameEvents(
                119,
                () -> both(c -> assertThat(c.deleteOne(Filters.eq("n", 111)).getDeletedCount())
                        .isEqualTo(1)));
        assertThat(types(events)).containsExactly("delete 111", "insert 119");
    }

    @Test
    void deleteManyOverBothTiersEmitsEveryDelete() {
        cold(121, 122, 123);
        both(c -> c.insertOne(TieredProxyTest.order(124, NOW, "cold").append("n", new BsonInt32(124))));
        List<BsonDocument> events = sameEvents(
                129,
                true,
                () -> both(c -> assertThat(
                                c.deleteMany(Filters.eq("state", "cold")).getDeletedCount())
                        .isEqualTo(4)));
        assertThat(types(events))
                .containsExactlyInAnyOrder("delete 121", "delete 122", "delete 123", "delete 124", "insert 129");
    }

    @Test
    void findOneAndDeleteOfAnArchiveOnlyDocumentEmitsItsDeleteAndAnswersWithItsProjection() {
        cold(131);
        List<BsonDocument> events = sameEvents(
                139,
                () -> both(c -> assertThat(c.findOneAndDelete(
                                Filters.eq("n", 131),
                                new FindOneAndDeleteOptions().projection(Projections.include("state"))))
                        .isEqualTo(
                                new BsonDocument("_id", new BsonInt32(131)).append("state", new BsonString("cold")))));
        assertThat(types(events)).containsExactly("delete 131", "insert 139");
    }

    @Test
    void updateOfAColdDocumentEmitsOnlyItsUpdate() {
        cold(141);
        List<BsonDocument> events =
                sameEvents(149, () -> both(c -> c.updateOne(Filters.eq("_id", 141), Updates.set("state", "changed"))));
        assertThat(types(events)).containsExactly("update 141", "insert 149");
    }

    @Test
    void replaceOfAColdDocumentEmitsOnlyItsReplace() {
        cold(151);
        List<BsonDocument> events = sameEvents(
                159,
                () -> both(c ->
                        c.replaceOne(Filters.eq("_id", 151), TieredProxyTest.order(151, NOW.minus(OLD), "replaced"))));
        assertThat(types(events)).hasSize(2).last().isEqualTo("insert 159");
    }

    @Test
    void updateManyOfColdDocumentsEmitsOnlyTheirUpdates() {
        cold(161, 162);
        List<BsonDocument> events = sameEvents(
                169,
                true,
                () -> both(c -> assertThat(c.updateMany(Filters.in("n", 161, 162), Updates.set("state", "many"))
                                .getModifiedCount())
                        .isEqualTo(2)));
        assertThat(types(events)).containsExactlyInAnyOrder("update 161", "update 162", "insert 169");
    }

    @Test
    void findOneAndUpdateOfAColdDocumentEmitsOnlyItsUpdate() {
        cold(171);
        List<BsonDocument> events =
                sameEvents(179, () -> both(c -> c.findOneAndUpdate(Filters.eq("n", 171), Updates.set("state", "fam"))));
        assertThat(types(events)).containsExactly("update 171", "insert 179");
    }

    @Test
    void promotionsAndEvictionsAreInvisible() throws Exception {
        cold(181);
        Evictor evictor = stack.evictorForPasses();
        BsonDocument recentInArchive = TieredProxyTest.order(182, NOW.minus(Duration.ofMinutes(3)), "promoted");
        stack.archiveOrders().insertOne(recentInArchive);
        reference().insertOne(recentInArchive);
        sameEvents(189, () -> {
            // an old document written through the proxy lands in the fast tier; the evictor removes it once mirrored
            both(c -> c.insertOne(TieredProxyTest.order(183, NOW.minus(OLD), "evicted")));
            // a point read of a recent archived document promotes it
            assertThat(stack.orders().find(Filters.eq("_id", 182)).first()).isEqualTo(recentInArchive);
            try {
                awaitInFast(182, true);
                assertThat(barrier.sync(Duration.ofSeconds(30))).as("mirrored").isPresent();
                evictor.runPass();
                awaitInFast(183, false);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** The stream's next event, waited for (see {@link #EVENT_WAIT}). */
    static ChangeStreamDocument<BsonDocument> next(MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream) {
        return assertTimeoutPreemptively(EVENT_WAIT, stream::next, "no event within " + EVENT_WAIT.toSeconds() + " s");
    }

    static void awaitInFast(int id, boolean present) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while ((stack.fastOrders().find(Filters.eq("_id", id)).first() != null) != present) {
            assertThat(System.nanoTime())
                    .as("document %d %s the fast tier", id, present ? "in" : "out of")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void aStreamResumesOnAnotherProxyReplicaAndAfterARestart() throws Exception {
        cold(191, 192, 193);
        var token = new java.util.concurrent.atomic.AtomicReference<BsonDocument>();
        List<BsonDocument> expected;
        try (var stream = stack.orders().watch(BsonDocument.class).cursor();
                var referenceStream = reference().watch(BsonDocument.class).cursor()) {
            both(c -> c.insertOne(TieredProxyTest.order(194, NOW, "first")));
            ChangeStreamDocument<BsonDocument> first = next(stream);
            token.set(first.getResumeToken());
            // after the token: a cold update (a copy-up), a cold delete, a cold findOneAndDelete
            both(c -> c.updateOne(Filters.eq("_id", 191), Updates.set("state", "resumed")));
            both(c -> c.deleteOne(Filters.eq("_id", 192)));
            both(c -> c.findOneAndDelete(Filters.eq("_id", 193)));
            List<BsonDocument> all = until(referenceStream, sentinel(reference(), 199));
            expected = all.subList(1, all.size());
            sentinel(stack.orders(), 199);
        }
        // another replica, started after the events: its ledger starts later, so it reads the history first
        ProxyServer other = stack.anotherProxy("tiered-test-resume");
        for (ProxyServer proxy : List.of(stack.proxy, other)) {
            try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/");
                    var resumed = client.getDatabase(TieredStack.POLICY.database())
                            .getCollection(TieredStack.POLICY.collection(), BsonDocument.class)
                            .watch(BsonDocument.class)
                            .resumeAfter(token.get())
                            .cursor()) {
                assertThat(until(resumed, 199))
                        .as("resumed through proxy on port %d", proxy.port())
                        .isEqualTo(expected);
            }
        }
    }

    /**
     * A replica started after a promotion and an eviction (as after a restart) knows nothing of them from its
     * own tail of the {@code thermocline} database: a stream resumed there from before them must still not show them.
     */
    @Test
    void aStreamResumedOnAReplicaStartedAfterAPromotionAndAnEvictionDoesNotShowThem() throws Exception {
        Evictor evictor = stack.evictorForPasses();
        BsonDocument recentInArchive = TieredProxyTest.order(212, NOW.minus(Duration.ofMinutes(3)), "promoted");
        stack.archiveOrders().insertOne(recentInArchive);
        BsonDocument token;
        try (var stream = stack.orders().watch(BsonDocument.class).cursor()) {
            stack.orders().insertOne(TieredProxyTest.order(213, NOW.minus(OLD), "evicted"));
            ChangeStreamDocument<BsonDocument> first = next(stream);
            token = first.getResumeToken();
            assertThat(stack.orders().find(Filters.eq("_id", 212)).first()).isEqualTo(recentInArchive);
            awaitInFast(212, true);
            assertThat(barrier.sync(Duration.ofSeconds(30))).as("mirrored").isPresent();
            evictor.runPass();
            awaitInFast(213, false);
            sentinel(stack.orders(), 219);
        }
        ProxyServer restarted = stack.anotherProxy("tiered-test-restarted");
        try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + restarted.port() + "/");
                var resumed = client.getDatabase(TieredStack.POLICY.database())
                        .getCollection(TieredStack.POLICY.collection(), BsonDocument.class)
                        .watch(BsonDocument.class)
                        .resumeAfter(token)
                        .cursor()) {
            assertThat(types(until(resumed, 219))).containsExactly("insert 219");
        }
    }

    /** In an application's transaction: the copy of a cold document is left out, its later delete and re-insert are not. */
    @Test
    void anApplicationTransactionShowsItsOwnEventsOnlyAndKeepsAReinsert() {
        cold(221, 222);
        List<BsonDocument> events = sameEvents(229, () -> {
            for (MongoClient client : List.of(stack.client, referenceClient)) {
                MongoCollection<BsonDocument> c = client.getDatabase(TieredStack.POLICY.database())
                        .getCollection(TieredStack.POLICY.collection(), BsonDocument.class);
                try (var session = client.startSession()) {
                    session.withTransaction(() -> {
                        c.updateOne(session, Filters.eq("_id", 221), Updates.set("state", "in-txn"));
                        c.deleteOne(session, Filters.eq("_id", 221));
                        c.insertOne(session, TieredProxyTest.order(221, NOW, "again"));
                        c.deleteOne(session, Filters.eq("_id", 222));
                        return null;
                    });
                }
            }
        });
        assertThat(types(events)).containsExactly("update 221", "delete 221", "insert 221", "delete 222", "insert 229");
    }

    @Test
    void updateLookupOfAColdDocumentsUpdateShowsTheDocument() {
        cold(201);
        try (var stream = stack.orders()
                        .watch(BsonDocument.class)
                        .fullDocument(FullDocument.UPDATE_LOOKUP)
                        .cursor();
                var referenceStream = reference()
                        .watch(BsonDocument.class)
                        .fullDocument(FullDocument.UPDATE_LOOKUP)
                        .cursor()) {
            both(c -> c.updateOne(Filters.eq("_id", 201), Updates.set("state", "looked-up")));
            assertThat(until(stream, sentinel(stack.orders(), 209)))
                    .isEqualTo(until(referenceStream, sentinel(reference(), 209)));
        }
    }
}
