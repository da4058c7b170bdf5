package io.thermocline.tiering.warmer;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WarmerIntegrationTest {

    static final Instant NOW = Instant.now();
    static final Instant OLD = NOW.minus(Duration.ofHours(3));
    TwoTiers tiers;

    @BeforeEach
    void start() {
        tiers = new TwoTiers();
    }

    @AfterEach
    void stop() {
        tiers.close();
    }

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
                all(tiers.fastOrders()).forEach(d -> firstBatch.add(d.getInt32("_id").getValue()));
            }
        }));
        assertThat(warmer.warmAll()).isTrue();

        assertThat(firstBatch).as("newest first").containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(all(tiers.fastOrders())).extracting(d -> d.getInt32("_id").getValue()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        NamespaceState state = tiers.store.namespace(TwoTiers.NS);
        assertThat(state.warmer().complete()).isTrue();
        assertThat(state.warmer().copied()).isEqualTo(10);
        assertThat(state.oldestCovered()).isBefore(NOW.minus(Duration.ofMinutes(10))).isAfter(OLD);
        tiers.sync();
        assertThat(tiers.archiveOrders().countDocuments()).as("copies are not mirrored back as user writes").isEqualTo(13);
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

        assertThat(tiers.warmer(3, TwoTiers.warmerOptions(FaultInjection.NONE)).warmAll()).isTrue();
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
        })).warmAll();
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
        })).warmAll();
        tiers.sync();
        assertThat(byId(tiers.fastOrders(), new BsonInt32(1))).as("not resurrected in the fast tier").isNull();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))).as("deleted in the archive").isNull();
    }

    @Test
    void doesNotCopyWhileTheFeederIsNotRunning() throws Exception {
        tiers.archiveOrders().insertOne(order(1, NOW, "v1"));
        tiers.feeder().close();
        Warmer warmer = tiers.warmer(10, TwoTiers.warmerOptions(FaultInjection.NONE).withBarrierTimeout(Duration.ofMillis(300)));
        assertThat(warmer.warmAll()).isFalse();
        assertThat(tiers.fastOrders().countDocuments(Filters.eq("_id", 1))).isZero();
        assertThat(tiers.store.namespace(TwoTiers.NS).coversNothing()).isTrue();
    }
}
