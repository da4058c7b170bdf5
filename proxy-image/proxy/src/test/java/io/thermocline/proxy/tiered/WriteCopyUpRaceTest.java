package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * User writes of cold documents racing a copy-up (warm copy, read-through promotion) of the same
 * {@code _id}, through the workers' own {@link CopyUp} while the write goes through the proxy. Each round
 * makes them meet at one place, never by timing: the copy-up runs at a point of the write path
 * ({@link WriteRaces}), or the write runs at a point of the copy-up ({@link FaultPoint}), and the round
 * checks they met there. Where the copy commits after the write read the tiers, the guarded write's own
 * copy meets the other copy's insert (a duplicate key on a server without snapshot isolation, a
 * WriteConflict on MongoDB): a transient conflict, never the client's error. One replica set accepts the
 * update, and refuses a batch insert over the archived {@code _id} only at that statement's index (E11000).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class WriteCopyUpRaceTest {

    static TieredStack stack;
    static CopyUpMeeting meeting;
    static CopyUp copyUp;
    static final Instant NOW = Instant.now();

    /** Both ways round, at every point where they can interleave; each twice (the insert: ordered and not). */
    static final List<CopyUpMeeting.Point> UPDATE_MEETINGS = List.of(
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION),
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.GUARDED_WRITE_FENCES_READ),
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.GUARDED_WRITE_TIERS_READ),
            CopyUpMeeting.Point.writeAt(FaultPoint.COPY_UP_FENCES_READ),
            CopyUpMeeting.Point.writeAt(FaultPoint.WARMER_BEFORE_COPY));

    static final List<CopyUpMeeting.Point> INSERT_MEETINGS = List.of(
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.INSERT_IDS_LOOKED_UP),
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.GUARDED_WRITE_FENCES_READ),
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.GUARDED_WRITE_TIERS_READ),
            CopyUpMeeting.Point.writeAt(FaultPoint.COPY_UP_FENCES_READ),
            CopyUpMeeting.Point.writeAt(FaultPoint.WARMER_BEFORE_COPY));

    static final int REPEATS = 2;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        meeting = new CopyUpMeeting(stack);
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        MirrorBarrier barrier = new MirrorBarrier(stack.fastWorkers, store, "write-race-test");
        copyUp = new CopyUp(
                stack.fastWorkers,
                stack.archiveWorkers,
                store,
                new OwnWrites(stack.fastWorkers, store, "warmer/write-race-test"),
                barrier,
                Duration.ofSeconds(10),
                Duration.ofMinutes(10),
                meeting.faults());
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static BsonDocument cold(int id) {
        return SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(10)), "cold");
    }

    private static <T> T raced(CopyUpMeeting.Point at, int id, Callable<T> write) throws Exception {
        return meeting.run(at, () -> copyUp.copy(TieredStack.POLICY.namespace(), List.of(new BsonInt32(id))), write)
                .written();
    }

    @Test
    void anUpdateOfAColdDocumentRacingItsCopyUpIsApplied() throws Exception {
        List<String> failed = new ArrayList<>();
        int round = 0;
        for (CopyUpMeeting.Point at : UPDATE_MEETINGS) {
            for (int repeat = 0; repeat < REPEATS; repeat++, round++) {
                int id = 500_000 + round;
                int value = round;
                stack.archiveOrders().insertOne(cold(id));
                try {
                    long matched = raced(
                            at,
                            id,
                            () -> stack.orders()
                                    .updateOne(Filters.eq("_id", id), Updates.set("v", value))
                                    .getMatchedCount());
                    BsonDocument now =
                            stack.orders().find(Filters.eq("_id", id)).first();
                    if (matched != 1
                            || now == null
                            || !now.containsKey("v")
                            || now.getNumber("v").intValue() != value) {
                        failed.add(at + ": matched " + matched + ", now " + now);
                    }
                } catch (RuntimeException e) {
                    failed.add(at + ": " + e);
                }
            }
        }
        assertThat(failed).as("updates of a cold document racing its copy-up").isEmpty();
    }

    @Test
    void aBatchInsertOverAnArchivedIdRacingItsCopyUpIsRefusedAtThatIndexOnly() throws Exception {
        List<String> failed = new ArrayList<>();
        int round = 0;
        for (CopyUpMeeting.Point at : INSERT_MEETINGS) {
            for (boolean ordered : List.of(true, false)) {
                int archived = 600_000 + round++ * 10;
                stack.archiveOrders().insertOne(cold(archived));
                List<BsonDocument> batch = List.of(
                        cold(archived + 1).append("tag", new BsonString("new")),
                        cold(archived).append("tag", new BsonString("duplicate")),
                        cold(archived + 2).append("tag", new BsonString("new")));
                try {
                    String wrong = raced(at, archived, () -> {
                        try {
                            stack.orders().insertMany(batch, new InsertManyOptions().ordered(ordered));
                            return "no error for the archived _id";
                        } catch (MongoBulkWriteException e) {
                            int expected = ordered ? 1 : 2;
                            boolean right = e.getWriteErrors().size() == 1
                                    && e.getWriteErrors().get(0).getIndex() == 1
                                    && e.getWriteErrors().get(0).getCode() == 11000
                                    && e.getWriteResult().getInsertedCount() == expected;
                            return right
                                    ? null
                                    : e.getWriteErrors() + " inserted "
                                            + e.getWriteResult().getInsertedCount();
                        }
                    });
                    long present = stack.fastOrders().countDocuments(Filters.in("_id", archived + 1, archived + 2));
                    BsonDocument original =
                            stack.orders().find(Filters.eq("_id", archived)).first();
                    if (wrong != null) {
                        failed.add(at + " (ordered=" + ordered + "): " + wrong);
                    } else if (present != (ordered ? 1 : 2) || original == null || original.containsKey("tag")) {
                        failed.add(at + " (ordered=" + ordered + "): " + present + " new documents, archived one now "
                                + original);
                    }
                } catch (RuntimeException e) {
                    failed.add(at + " (ordered=" + ordered + "): " + e);
                }
            }
        }
        assertThat(failed)
                .as("batch inserts over an archived _id racing its copy-up")
                .isEmpty();
    }
}
