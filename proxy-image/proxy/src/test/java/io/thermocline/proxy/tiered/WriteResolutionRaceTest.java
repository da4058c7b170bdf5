package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoWriteException;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.tiered.RetryAcrossReplicasTest.Raw;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The write path reads to decide a write (is this {@code _id} anywhere? which documents does this
 * delete match?) and then writes: a document that the feeder mirrors and the evictor removes from
 * the fast tier between those reads and the write must still count. Each test runs that worker step
 * exactly there ({@link WriteRaces}), with the feeder stopped until then, so the document is in the
 * fast tier only when the write starts and in the archive only when it lands.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteResolutionRaceTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    MirrorBarrier barrier;
    OwnWrites evictorWrites;
    Fences fences;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "resolution-race-test");
        evictorWrites = new OwnWrites(stack.fastWorkers, store, "evictor/resolution-race-test");
        fences = new Fences(store);
        // a checkpoint, then the feeder stops: restarted, it mirrors what was written while it was down
        stack.startFeeder();
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        stack.stopFeeder();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    /** An order outside the window, so the evictor may remove it once the archive holds it. */
    private static BsonDocument cold(int id, String tag) {
        return SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(3)), "cold")
                .append("tag", new BsonString(tag));
    }

    /** What the evictor does to a mirrored document: in its marked transaction, an EVICTION fence and the delete. */
    private void evict(int id) {
        evictorWrites.inTransaction(session -> {
            fences.write(session, TieredStack.POLICY.namespace(), new BsonInt32(id), Fence.Kind.EVICTION);
            return Blocking.single(stack.fastWorkers
                            .getDatabase("shop")
                            .getCollection("orders", BsonDocument.class)
                            .deleteOne(session, Filters.eq("_id", id)))
                    .orElseThrow()
                    .getDeletedCount();
        });
    }

    /** The feeder mirrors everything written so far, then the evictor removes {@code id} from the fast tier. */
    private void mirrorThenEvict(int id) {
        try {
            assertThat(barrier.sync(Duration.ofSeconds(10)))
                    .as("the feeder mirrored the fast tier")
                    .isPresent();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        evict(id);
        assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", id))).isZero();
        assertThat(stack.archiveOrders().countDocuments(Filters.eq("_id", id))).isOne();
    }

    /** Runs {@code step} the first time the write path reaches {@code point}. */
    private void once(WriteRaces.Point point, Runnable step) {
        AtomicBoolean ran = new AtomicBoolean();
        stack.writeRaces.set(reached -> {
            if (reached == point && ran.compareAndSet(false, true)) {
                step.run();
            }
        });
    }

    private void startFeeder() {
        try {
            stack.startFeeder();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void anInsertOfAnIdMirroredAndEvictedWhileItWasLookedUpFailsWithDuplicateKey() {
        stack.orders().insertOne(cold(1, "original")); // the feeder is stopped: the fast tier alone holds it
        once(WriteRaces.Point.INSERT_IDS_LOOKED_UP, () -> {
            startFeeder();
            mirrorThenEvict(1);
        });
        MongoWriteException duplicate =
                catchThrowableOfType(() -> stack.orders().insertOne(cold(1, "again")), MongoWriteException.class);
        assertThat(duplicate)
                .as("one database refuses a second document with _id 1")
                .isNotNull();
        assertThat(duplicate.getCode()).isEqualTo(11000);
        assertThat(stack.orders()
                        .find(Filters.eq("_id", 1))
                        .first()
                        .getString("tag")
                        .getValue())
                .isEqualTo("original");
    }

    @Test
    void aRetriedInsertThatFirstWentDirectGetsItsOriginalReply() throws Exception {
        UUID lsid = UUID.randomUUID();
        String insert = "{insert: 'orders', documents: [{_id: 2, createdAt: {$date: '" + NOW.minus(Duration.ofHours(3))
                + "'}, tag: 'mine'}]}";
        try (Raw raw = new Raw(stack.proxy.port())) {
            BsonDocument first = raw.command(retryable(BsonDocument.parse(insert), lsid, 4));
            assertThat(first.getNumber("n").intValue()).isEqualTo(1);
            startFeeder();
            mirrorThenEvict(2); // the reply was lost; the document left the fast tier before the driver retried
            BsonDocument retry = raw.command(retryable(BsonDocument.parse(insert), lsid, 4));
            assertThat(retry.containsKey("writeErrors"))
                    .as("the retry's reply %s", retry.toJson())
                    .isFalse();
            assertThat(retry.getNumber("n").intValue()).as("the retry's n").isEqualTo(1);
            // another write (a new txnNumber) of the same document is a duplicate, as on one database
            BsonDocument again = raw.command(retryable(BsonDocument.parse(insert), lsid, 5));
            assertThat(again.getNumber("n").intValue()).as("%s", again.toJson()).isZero();
            assertThat(again.getArray("writeErrors")
                            .get(0)
                            .asDocument()
                            .getNumber("code")
                            .intValue())
                    .isEqualTo(11000);
        }
        assertThat(stack.orders().countDocuments(Filters.eq("_id", 2))).isOne();
    }

    private static BsonDocument retryable(BsonDocument command, UUID lsid, long txnNumber) {
        return command.append("lsid", new BsonDocument("id", new BsonBinary(lsid, UuidRepresentation.STANDARD)))
                .append("txnNumber", new BsonInt64(txnNumber))
                .append("$db", new BsonString("shop"));
    }

    @Test
    void aDeleteOfADocumentMirroredAndEvictedWhileItsTargetsWereResolvedDeletesIt() throws Exception {
        assertDeleteCountsTheRacedDocument(false);
    }

    @Test
    void aDeleteManyOfADocumentMirroredAndEvictedWhileItsTargetsWereResolvedDeletesIt() throws Exception {
        assertDeleteCountsTheRacedDocument(true);
    }

    /**
     * The feeder starts only once the delete waits at its sync barrier for it (its probe is written: a positive
     * signal, not a sleep hoping the delete was sent); the document is mirrored and evicted between the delete's
     * fast-tier read and the rest of its transaction ({@link WriteRaces.Point#DELETE_BETWEEN_TIER_READS}).
     */
    private void assertDeleteCountsTheRacedDocument(boolean many) throws Exception {
        stack.orders().insertOne(cold(3, "doomed"));
        AtomicBoolean raced = new AtomicBoolean();
        once(WriteRaces.Point.DELETE_BETWEEN_TIER_READS, () -> {
            raced.set(true);
            mirrorThenEvict(3);
        });
        long probesBefore = stack.syncBarrierProbes();
        CompletableFuture<Long> deleted = CompletableFuture.supplyAsync(() -> many
                ? stack.orders().deleteMany(Filters.eq("tag", "doomed")).getDeletedCount()
                : stack.orders().deleteOne(Filters.eq("tag", "doomed")).getDeletedCount());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (stack.syncBarrierProbes() == probesBefore) {
            assertThat(deleted).as("the delete waits for the stopped feeder").isNotDone();
            assertThat(System.nanoTime())
                    .as("the delete probes its sync barrier")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
        assertThat(raced).as("no tier read before the feeder started").isFalse();
        startFeeder();
        assertThat(deleted.get(60, TimeUnit.SECONDS)).as("the delete's n").isEqualTo(1);
        assertThat(raced)
                .as("the document was mirrored and evicted inside the delete")
                .isTrue();
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        assertThat(stack.archiveOrders().countDocuments(Filters.eq("_id", 3)))
                .as("left in the archive")
                .isZero();
        assertThat(stack.orders().countDocuments(Filters.eq("tag", "doomed")))
                .as("visible through the proxy")
                .isZero();
    }
}
