package io.thermocline.tiering.warmer;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

class WarmerIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    static final Instant OLD = NOW.minus(Duration.ofHours(3));

    /** The archive as the user's existing replica set holds it at adoption: 10 recent documents, 3 old. */
    void adopt() {
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            documents.add(order(i, NOW.minus(Duration.ofMinutes(i)), "recent"));
        }
        for (int i = 11; i <= 13; i++) {
            documents.add(order(i, OLD, "old"));
        }
        tiers.archiveOrders().insertMany(documents);
    }

    @Test
    void copiesDocumentsInsideTheWindowNewestFirstAndLowersTheBound() throws Exception {
        adopt();
        tiers.feeder();
        List<Integer> firstBatch = new ArrayList<>();
        Warmer warmer = tiers.warmer(4, TwoTiers.warmerOptions(point -> {
            if (point == FaultPoint.WARMER_COPIED && firstBatch.isEmpty()) {
                all(tiers.fastOrders())
                        .forEach(d -> firstBatch.add(d.getInt32("_id").getValue()));
            }
        }));
        assertThat(warmer.warmAll()).isTrue();

        assertThat(firstBatch).as("newest first").containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(all(tiers.fastOrders()))
                .extracting(d -> d.getInt32("_id").getValue())
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        NamespaceState state = tiers.store.namespace(TwoTiers.NS);
        assertThat(state.warmer().complete()).isTrue();
        assertThat(state.warmer().copied()).isEqualTo(10);
        assertThat(state.oldestCovered())
                .isBefore(NOW.minus(Duration.ofMinutes(10)))
                .isAfter(OLD);
        tiers.sync();
        assertThat(tiers.archiveOrders().countDocuments())
                .as("copies are not mirrored back as user writes")
                .isEqualTo(13);
    }

    @Test
    void warmsDatesThenEpochMillisecondNumbersAndCoversBoth() throws Exception {
        tiers.archiveOrders()
                .insertMany(List.of(
                        order(1, NOW.minusSeconds(60), "date"),
                        order(2, NOW.minusSeconds(120), "date"),
                        new BsonDocument("_id", new BsonInt32(3))
                                .append(
                                        "createdAt",
                                        new org.bson.BsonInt64(
                                                NOW.minusSeconds(30).toEpochMilli())),
                        new BsonDocument("_id", new BsonInt32(4))
                                .append(
                                        "createdAt",
                                        new org.bson.BsonInt64(
                                                NOW.minusSeconds(90).toEpochMilli())),
                        new BsonDocument("_id", new BsonInt32(5))
                                .append("createdAt", new org.bson.BsonInt64(OLD.toEpochMilli()))));
        tiers.feeder();
        assertThat(tiers.warmer(1, TwoTiers.warmerOptions(FaultInjection.NONE)).warmAll())
                .isTrue();
        assertThat(all(tiers.fastOrders()))
                .extracting(d -> d.getInt32("_id").getValue())
                .containsExactly(1, 2, 3, 4);
        assertThat(tiers.store.namespace(TwoTiers.NS).oldestCovered()).isBefore(NOW.minusSeconds(120));
    }

    @Test
    void whileNumberAgedDocumentsRemainTheDateWalkDoesNotLowerTheBound() throws Exception {
        tiers.archiveOrders()
                .insertMany(List.of(
                        order(1, NOW.minusSeconds(60), "date"),
                        new BsonDocument("_id", new BsonInt32(2))
                                .append(
                                        "createdAt",
                                        new org.bson.BsonInt64(
                                                NOW.minusSeconds(30).toEpochMilli()))));
        tiers.feeder();
        Warmer warmer = tiers.warmer(1, TwoTiers.warmerOptions(FaultInjection.NONE));
        assertThat(warmer.step(TwoTiers.POLICY)).isEqualTo(Warmer.Progress.COPIED_BATCH);
        assertThat(all(tiers.fastOrders()))
                .extracting(d -> d.getInt32("_id").getValue())
                .containsExactly(1);
        assertThat(tiers.store.namespace(TwoTiers.NS).oldestCovered())
                .as("the date batch proves nothing while a younger number waits")
                .isNull();
        assertThat(warmer.warmAll()).isTrue();
        assertThat(tiers.store.namespace(TwoTiers.NS).oldestCovered()).isNotNull();
    }

    @Test
    void resumesFromItsCheckpointAfterACrash() throws Exception {
        adopt();
        tiers.feeder();
        AtomicInteger batches = new AtomicInteger();
        Warmer crashing = tiers.warmer(3, TwoTiers.warmerOptions(point -> {
            if (point == FaultPoint.WARMER_COPIED && batches.incrementAndGet() == 2) {
                throw new InjectedCrash(point);
            }
        }));
        try {
            crashing.warmAll();
        } catch (InjectedCrash expected) {
            // the process died after copying its second batch, before checkpointing it
        }
        NamespaceState afterCrash = tiers.store.namespace(TwoTiers.NS);
        assertThat(afterCrash.warmer().complete()).isFalse();
        assertThat(afterCrash.warmer().lastId()).isEqualTo(new BsonInt32(3));

        assertThat(tiers.warmer(3, TwoTiers.warmerOptions(FaultInjection.NONE)).warmAll())
                .isTrue();
        assertThat(tiers.fastOrders().countDocuments()).isEqualTo(10);
        assertThat(tiers.store.namespace(TwoTiers.NS).warmer().complete()).isTrue();
    }

    /** Race: a user update lands while a warm copy is in flight. Guard: a copy never overwrites a fast-tier version. */
    @Test
    void userUpdateDuringAWarmCopyIsNotOverwritten() throws Exception {
        tiers.archiveOrders().insertOne(order(1, NOW, "v1"));
        tiers.feeder();
        tiers.warmer(10, TwoTiers.warmerOptions(point -> {
                    if (point == FaultPoint.WARMER_BEFORE_COPY) {
                        // the proxy's point update on a cold document: promote, then update in the fast tier
                        tiers.fastOrders().insertOne(order(1, NOW, "v2"));
                    }
                }))
                .warmAll();
        assertThat(byId(tiers.fastOrders(), new BsonInt32(1))).isEqualTo(order(1, NOW, "v2"));
        tiers.sync();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))).isEqualTo(order(1, NOW, "v2"));
    }

    /** Race: a user delete lands while a warm copy is in flight. Guard: the user fence changed since the copy's read. */
    @Test
    void userDeleteDuringAWarmCopyIsNotResurrected() throws Exception {
        tiers.archiveOrders().insertOne(order(1, NOW, "v1"));
        tiers.feeder();
        tiers.warmer(10, TwoTiers.warmerOptions(point -> {
                    if (point == FaultPoint.WARMER_BEFORE_COPY) {
                        tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(1));
                    }
                }))
                .warmAll();
        tiers.sync();
        assertThat(byId(tiers.fastOrders(), new BsonInt32(1)))
                .as("not resurrected in the fast tier")
                .isNull();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1)))
                .as("deleted in the archive")
                .isNull();
    }

    /**
     * Without a feeder only documents no fence names are copied (their latest versions are in the archive:
     * docs/consistency.md, "Copy-ups that skip the barrier"); a user-deleted one waits for the feeder, and the
     * batch is not checkpointed.
     */
    @Test
    void copiesOnlyUnfencedDocumentsWhileTheFeederIsNotRunning() throws Exception {
        tiers.archiveOrders().insertMany(List.of(order(1, NOW, "v1"), order(2, NOW, "deleted")));
        tiers.feeder().close();
        tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(2)); // its tombstone stands, the archive still holds it
        Warmer warmer = tiers.warmer(
                10, TwoTiers.warmerOptions(FaultInjection.NONE).withBarrierTimeout(Duration.ofMillis(300)));
        assertThat(warmer.warmAll()).isFalse();
        assertThat(byId(tiers.fastOrders(), new BsonInt32(1)))
                .as("unfenced: copied")
                .isEqualTo(order(1, NOW, "v1"));
        assertThat(tiers.fastOrders().countDocuments(Filters.eq("_id", 2)))
                .as("deleted: not resurrected")
                .isZero();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(2)))
                .as("the delete is not mirrored")
                .isNotNull();
        assertThat(tiers.store.namespace(TwoTiers.NS).coversNothing()).isTrue();
    }

    static BsonDocument aged(int id, org.bson.BsonValue age) {
        return new BsonDocument("_id", new BsonInt32(id)).append("createdAt", age);
    }

    static org.bson.BsonDateTime date(Instant instant) {
        return new org.bson.BsonDateTime(instant.toEpochMilli());
    }

    /** Bug: an array age as the last document of a batch made the next batch's filter compare with the array and find nothing. */
    @Test
    void anArrayAgeAtTheEndOfABatchDoesNotEndTheWalk() throws Exception {
        tiers.archiveOrders()
                .insertMany(List.of(
                        aged(1, date(NOW.minusSeconds(60))),
                        aged(2, new org.bson.BsonArray(List.of(date(NOW.minusSeconds(120)), date(OLD)))),
                        aged(3, date(NOW.minusSeconds(180))),
                        aged(4, date(NOW.minusSeconds(240))),
                        aged(5, date(OLD))));
        tiers.feeder();
        assertThat(tiers.warmer(2, TwoTiers.warmerOptions(FaultInjection.NONE)).warmAll())
                .isTrue();
        NamespaceState state = tiers.store.namespace(TwoTiers.NS);
        assertThat(all(tiers.fastOrders()))
                .as("every document the bound %s promises", state.oldestCovered())
                .extracting(d -> d.getInt32("_id").getValue())
                .containsExactly(1, 2, 3, 4);
    }

    /** Bug: a dotted age path through an array of documents read no age: the bound fell to the cutoff, then an NPE. */
    @Test
    void aDottedAgePathThroughAnArrayIsWalkedLikeMongoDbSortsIt() throws Exception {
        var policy = new io.thermocline.config.CollectionPolicy("shop", "orders", "lines.at", Duration.ofHours(1));
        java.util.function.IntFunction<BsonDocument> line =
                minutes -> new BsonDocument("at", date(NOW.minus(Duration.ofMinutes(minutes))));
        tiers.archiveOrders()
                .insertMany(List.of(
                        new BsonDocument("_id", new BsonInt32(1))
                                .append("lines", new org.bson.BsonArray(List.of(line.apply(1), line.apply(200)))),
                        new BsonDocument("_id", new BsonInt32(2))
                                .append("lines", new org.bson.BsonArray(List.of(line.apply(2)))),
                        new BsonDocument("_id", new BsonInt32(3))
                                .append("lines", new org.bson.BsonArray(List.of(line.apply(300), line.apply(3)))),
                        new BsonDocument("_id", new BsonInt32(4))
                                .append("lines", new org.bson.BsonArray(List.of(line.apply(4)))),
                        new BsonDocument("_id", new BsonInt32(5))
                                .append("lines", new org.bson.BsonArray(List.of(line.apply(500))))));
        tiers.feeder();
        Warmer warmer = new Warmer(
                tiers.fast,
                tiers.archive,
                List.of(policy),
                new io.thermocline.config.WarmerConfig(1, 100_000),
                TwoTiers.warmerOptions(FaultInjection.NONE));
        List<String> boundsAfterEachBatch = new ArrayList<>();
        Warmer.Progress progress;
        do {
            progress = warmer.step(policy);
            Instant bound = tiers.store.namespace(policy.namespace()).oldestCovered();
            List<Integer> held = all(tiers.fastOrders()).stream()
                    .map(d -> d.getInt32("_id").getValue())
                    .toList();
            boundsAfterEachBatch.add(held + " bound " + bound);
            if (bound != null) {
                for (int id = 1; id <= 4; id++) {
                    boolean promised = !NOW.minus(Duration.ofMinutes(id)).isBefore(bound);
                    assertThat(!promised || held.contains(id))
                            .as("bound %s promises %d: %s", bound, id, boundsAfterEachBatch)
                            .isTrue();
                }
            }
        } while (progress != Warmer.Progress.COMPLETE && boundsAfterEachBatch.size() < 20);
        assertThat(progress).as("%s", boundsAfterEachBatch).isEqualTo(Warmer.Progress.COMPLETE);
        assertThat(all(tiers.fastOrders()))
                .extracting(d -> d.getInt32("_id").getValue())
                .containsExactly(1, 2, 3, 4);
        warmer.close();
    }
}
