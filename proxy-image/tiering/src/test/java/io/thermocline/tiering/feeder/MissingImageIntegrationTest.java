package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 37: an archive-routed read returned the version before an acknowledged update. The update's
 * {@code updateLookup} ran after a later delete of the document, so its event carried no image and
 * mirrored nothing, while its batch still published its cluster time as mirrored-through: a reader's
 * barrier between the update and the delete passed with the archive still holding the old version.
 *
 * <p>Each test forces that interleaving with race points: the update, the reader's barrier probe and
 * the delete happen before the feeder's stream reads the update (so its lookup finds nothing), one
 * event per batch (every event is a batch boundary), and the delete's archive write is held while the
 * test reads as the proxy does: once the checkpoint covers the reader's barrier, the archive must
 * hold the update (or its delete).
 */
@Timeout(90)
class MissingImageIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    static final FeederConfig ONE_EVENT_PER_BATCH = new FeederConfig(1, Duration.ofMillis(20), true);
    static final BsonDocument BEFORE = order(1, NOW, "v1");

    final List<Feeder> feeders = new ArrayList<>();
    final List<HeldSubscription> holds = new ArrayList<>();

    /** The race's three writes, as the fast tier timed them, and the stream position of the reader's probe. */
    record Race(
            BsonTimestamp updated,
            BsonTimestamp readerBarrier,
            BsonDocument updateToken,
            BsonDocument readerProbeToken) {}

    @BeforeEach
    void start() throws Exception {
        Feeder first = tiers.feeder(ONE_EVENT_PER_BATCH, TwoTiers.feederOptions(FaultInjection.NONE));
        tiers.fastOrders().insertOne(BEFORE);
        tiers.sync();
        first.close();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))).isEqualTo(BEFORE);
    }

    @AfterEach
    void stop() {
        holds.forEach(HeldSubscription::release);
        feeders.forEach(Feeder::close);
    }

    /** A live feeder whose stream reads the update only after the delete: it holds mirrored-through below the update. */
    @Test
    void anUpdateLookedUpAfterItsDeleteKeepsMirroredThroughBelowItUntilTheDeleteIsApplied() throws Exception {
        HeldSubscription stream = hold(HeldSubscription.firstChangeStream(tiers.fast));
        HeldSubscription delete = hold(HeldSubscription.firstBulkWriteWithA(DeleteOneModel.class, tiers.archive));
        start(stream.client(), delete.client(), FaultInjection.NONE);
        assertThat(stream.awaitHeld(Duration.ofSeconds(20)))
                .as("the feeder opened its stream")
                .isTrue();

        Race race = race();
        stream.release();

        assertTheArchiveHoldsWhatIsPublished(race, delete);
    }

    /**
     * A feeder that held mirrored-through below such an update dies before the delete is applied; its
     * successor resumes after the update, never sees it, and must not publish past it either.
     */
    @Test
    void aRestartedFeederDoesNotPublishPastWhatItsPredecessorHeldBack() throws Exception {
        HeldSubscription stream = hold(HeldSubscription.firstChangeStream(tiers.fast));
        Race[] race = new Race[1];
        Feeder dying = start(stream.client(), tiers.archive, point -> {
            // dies once the update's batch is checkpointed, before the reader's probe's batch is
            if (point == FaultPoint.FEEDER_CHECKPOINTED
                    && race[0] != null
                    && race[0].updateToken()
                            .equals(tiers.store.feederCheckpoint().resumeToken())) {
                throw new InjectedCrash(point);
            }
        });
        assertThat(stream.awaitHeld(Duration.ofSeconds(20)))
                .as("the feeder opened its stream")
                .isTrue();
        race[0] = race();
        stream.release();
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> !dying.running());
        assertThat(dying.crash()).isInstanceOf(InjectedCrash.class);

        HeldSubscription delete = hold(HeldSubscription.firstBulkWriteWithA(DeleteOneModel.class, tiers.archive));
        start(tiers.fast, delete.client(), FaultInjection.NONE);
        assertTheArchiveHoldsWhatIsPublished(race[0], delete);
    }

    private HeldSubscription hold(HeldSubscription held) {
        holds.add(held);
        return held;
    }

    private Feeder start(MongoClient fast, MongoClient archive, FaultInjection faults) {
        Feeder feeder = new Feeder(
                        fast, archive, List.of(TwoTiers.POLICY), ONE_EVENT_PER_BATCH, TwoTiers.feederOptions(faults))
                .start();
        feeders.add(feeder);
        return feeder;
    }

    /** The user's update, a reader arriving (its barrier probe), the user's delete, each acknowledged before the next. */
    private Race race() {
        BsonTimestamp updated;
        try (ClientSession session = tiers.fastSync.startSession()) {
            tiers.fastOrders().updateOne(session, Filters.eq("_id", 1), Updates.set("state", "v2"));
            updated = session.getOperationTime();
        }
        BsonTimestamp readerBarrier = tiers.barrier.probe();
        tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(1));
        return new Race(
                updated,
                readerBarrier,
                resumeTokenAt(updated, TwoTiers.POLICY.database(), TwoTiers.POLICY.collection()),
                resumeTokenAt(readerBarrier, MetadataStore.DATABASE, MetadataStore.PROBES));
    }

    /**
     * With the delete's archive write held: once the batch before it (the reader's probe) is
     * checkpointed, the checkpoint covers the reader's barrier only if the archive holds the update.
     */
    private void assertTheArchiveHoldsWhatIsPublished(Race race, HeldSubscription delete) throws Exception {
        assertThat(delete.awaitHeld(Duration.ofSeconds(20)))
                .as("the delete's archive write was reached")
                .isTrue();
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> race.readerProbeToken()
                        .equals(tiers.store.feederCheckpoint().resumeToken()));
        FeederCheckpoint published = tiers.store.feederCheckpoint();
        BsonDocument archived = byId(tiers.archiveOrders(), new BsonInt32(1));
        assertThat(published.covers(race.readerBarrier()) && BEFORE.equals(archived))
                .as(
                        "mirrored-through %s covers the reader's barrier %s (after the update at %s) while the archive holds %s",
                        Feeder.describe(published.mirroredThrough()),
                        Feeder.describe(race.readerBarrier()),
                        Feeder.describe(race.updated()),
                        archived)
                .isFalse();
        assertThat(published.covers(race.updated()))
                .as("not published past the update while its delete waits")
                .isFalse();

        delete.release();
        tiers.sync();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1)))
                .as("the delete reached the archive")
                .isNull();
    }

    /** The resume token of the change event at {@code time} in {@code db.coll}, read from the fast tier's stream. */
    private BsonDocument resumeTokenAt(BsonTimestamp time, String db, String coll) {
        var cursor = tiers.fastSync
                .watch(
                        List.of(Aggregates.match(Filters.and(Filters.eq("ns.db", db), Filters.eq("ns.coll", coll)))),
                        BsonDocument.class)
                .startAtOperationTime(time)
                .maxAwaitTime(100, TimeUnit.MILLISECONDS)
                .cursor();
        try (cursor) {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                ChangeStreamDocument<BsonDocument> event = cursor.tryNext();
                if (event != null && time.equals(event.getClusterTime())) {
                    return event.getResumeToken();
                }
            }
        }
        throw new AssertionError("no event at " + Feeder.describe(time) + " in " + db + "." + coll);
    }
}
